"""Table rows: the sign, follow-the-leader, LAMB and mixed-precision update ops (numpy references
written from the update rules; MXNet's own results are checked in test_optimizer_ops.py)."""

from __future__ import annotations

import numpy as np
from cases import Case, uniform


def _clip(g, c):
    return np.clip(g, -c, c) if c >= 0 else g


def _signsgd(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    return (1 - lr * wd) * w - lr * np.sign(_clip(g * rescale_grad, clip_gradient))


def _signum(w, g, m, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, wd_lh=0.0):
    m2 = momentum * m - (1 - momentum) * (wd * w + _clip(g * rescale_grad, clip_gradient))
    return (1 - lr * wd_lh) * w + lr * np.sign(m2)


def _ftml(w, g, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_grad=-1.0):
    g = _clip(g * rescale_grad + wd * w, clip_grad)
    v2 = beta2 * v + (1 - beta2) * g * g
    d2 = (1 - beta1 ** t) / lr * (np.sqrt(v2 / (1 - beta2 ** t)) + epsilon)
    z2 = beta1 * z + (1 - beta1) * g - (d2 - beta1 * d) * w
    return -z2 / d2


def _ftrl(w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    g = _clip(g * rescale_grad, clip_gradient)
    z2 = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / lr
    n2 = n + g * g
    return (np.sign(z2) * lamda1 - z2) / ((beta + np.sqrt(n2)) / lr + wd) * (np.abs(z2) > lamda1)


def _lamb1(w, g, mean, var, t, wd, beta1=0.9, beta2=0.999, epsilon=1e-6, bias_correction=True, rescale_grad=1.0,
           clip_gradient=-1.0):
    g = _clip(g * rescale_grad, clip_gradient)
    m2 = beta1 * mean + (1 - beta1) * g
    v2 = beta2 * var + (1 - beta2) * g * g
    if bias_correction:
        m2, v2 = m2 / (1 - beta1 ** t), v2 / (1 - beta2 ** t)
    return m2 / (np.sqrt(v2) + epsilon) + wd * w


def _lamb2(w, g, r1, r2, lr, lower_bound=-1.0, upper_bound=-1.0):
    r1 = float(r1[0])
    r1 = max(r1, lower_bound) if lower_bound >= 0 else r1
    r1 = min(r1, upper_bound) if upper_bound >= 0 else r1
    ratio = 1.0 if r1 == 0 or r2[0] == 0 else r1 / float(r2[0])
    return w - lr * ratio * g


def _mp_lamb1(w, g, mean, var, w32, **kw):
    return _lamb1(w32, g, mean, var, **kw)


def _mp_lamb2(w, g, r1, r2, w32, **kw):
    return _lamb2(w32, g, r1, r2, **kw)


def _group_adagrad(w, g, h, lr, rescale_grad=1.0, clip_gradient=-1.0, epsilon=1e-5):
    g = _clip(g * rescale_grad, clip_gradient).reshape(len(w), -1)
    h2 = h + (g * g).mean(axis=1, keepdims=True)  # one value per row (MXNet's row_length = prod(shape[1:]))
    return w - (lr * g / np.sqrt(h2 + epsilon)).reshape(w.shape)


def _mp_sgd(w, g, w32, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    return w32 - lr * (_clip(g * rescale_grad, clip_gradient) + wd * w32)


def _mp_sgd_mom(w, g, m, w32, lr, momentum=0.0, wd=0.0):
    return w32 + momentum * m - lr * (g + wd * w32)


def _mp_nag(w, g, m, w32, lr, momentum=0.0, wd=0.0):
    step = lr * (g + wd * w32)
    return w32 + momentum * (momentum * m - step) - step


S = (3, 4)
_norms = [uniform(), uniform(), uniform(0.5, 2), uniform(0.5, 2)]
CASES = [
    Case("signsgd_update", [(S, S)], ref=_signsgd, params=dict(lr=0.1, wd=0.01, rescale_grad=0.5), grad=False),
    Case("signum_update", [(S, S, S)], ref=_signum, grad=False,
         params=dict(lr=0.1, momentum=0.9, wd=0.01, wd_lh=0.02, clip_gradient=0.3)),
    Case("ftml_update", [(S,) * 5], ref=_ftml, params=dict(lr=0.1, t=2, wd=0.01, clip_grad=0.5), grad=False,
         gens=[uniform(), uniform(), uniform(0.1, 1), uniform(0, 1), uniform()]),
    Case("ftrl_update", [(S,) * 4], ref=_ftrl, params=dict(lr=0.1, lamda1=0.05, wd=0.01), grad=False,
         gens=[uniform(), uniform(), uniform(), uniform(0, 1)]),
    Case("lamb_update_phase1", [(S,) * 4], ref=_lamb1, params=dict(t=2, wd=0.01, clip_gradient=0.5), grad=False,
         gens=[uniform(), uniform(), uniform(), uniform(0, 1)]),
    Case("lamb_update_phase2", [(S, S, (1,), (1,))], ref=_lamb2, params=dict(lr=0.1, upper_bound=1.5), grad=False,
         gens=_norms),
    Case("mp_lamb_update_phase1", [(S,) * 5], ref=_mp_lamb1, params=dict(t=3, wd=0.01), grad=False,
         gens=[uniform(), uniform(), uniform(), uniform(0, 1), uniform()], dtypes=("float32",)),
    Case("mp_lamb_update_phase2", [(S, S, (1,), (1,), S)], ref=_mp_lamb2, params=dict(lr=0.1), grad=False,
         gens=[*_norms, uniform()], dtypes=("float32",)),
    Case("_contrib_group_adagrad_update", [(S, S, (3, 1)), ((5, 2, 3), (5, 2, 3), (5, 1))], ref=_group_adagrad,
         params=dict(lr=0.1, rescale_grad=0.5, clip_gradient=0.4), grad=False,
         gens=[uniform(), uniform(), uniform(0, 1)]),
    Case("mp_sgd_update", [(S, S, S)], ref=_mp_sgd, params=dict(lr=0.1, wd=0.01, clip_gradient=0.4), grad=False,
         dtypes=("float32",)),
    Case("mp_sgd_mom_update", [(S,) * 4], ref=_mp_sgd_mom, params=dict(lr=0.1, momentum=0.9, wd=0.01), grad=False,
         dtypes=("float32",)),
    Case("mp_nag_mom_update", [(S,) * 4], ref=_mp_nag, params=dict(lr=0.1, momentum=0.9, wd=0.01), grad=False,
         dtypes=("float32",)),
]


# -- multi_mp_sgd_* and preloaded_multi_* (optimizer/multi_sgd_forms.py) ---------------------------------------
def _sgd_step(w, g, lr, wd, rescale=1.0, clip=-1.0):
    g = g.astype(np.float64) * rescale
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    return w.astype(np.float64) * (1 - lr * wd) - lr * g


def _mp_forms(*ins, lrs=None, wds=None, num_weights=1, rescale_grad=1.0, clip_gradient=-1.0, per=3):
    if lrs is None:
        lrs, wds, ins = ins[-2], ins[-1], ins[:-2]
    return tuple(_sgd_step(ins[per * i + per - 1], ins[per * i + 1], lrs[i], wds[i], rescale_grad, clip_gradient)
                 .astype(ins[per * i].dtype) for i in range(num_weights))


def _pre_sgd(*ins, num_weights=1, rescale_grad=1.0, clip_gradient=-1.0):
    lrs, wds, ins = ins[-2], ins[-1], ins[:-2]
    return tuple(_sgd_step(ins[2 * i], ins[2 * i + 1], lrs[i], wds[i], rescale_grad, clip_gradient)
                 .astype(ins[2 * i].dtype) for i in range(num_weights))


def _mom_forms(mp):
    def ref(*ins, momentum=0.0, num_weights=1, rescale_grad=1.0, clip_gradient=-1.0, lrs=None, wds=None):
        per = 4 if mp else 3
        if lrs is None:
            lrs, wds, ins = ins[-2], ins[-1], ins[:-2]
        outs = []
        for i in range(num_weights):
            w = ins[per * i + per - 1] if mp else ins[per * i]
            g = ins[per * i + 1].astype(np.float64) * rescale_grad
            if clip_gradient >= 0:
                g = np.clip(g, -clip_gradient, clip_gradient)
            mom = momentum * ins[per * i + 2] - lrs[i] * wds[i] * w - lrs[i] * g
            outs.append((w + mom).astype(ins[per * i].dtype))
        return tuple(outs)
    return ref


_POS = uniform(0.05, 0.4)
CASES += [
    Case("multi_mp_sgd_update", [((3,), (3,), (3,), (2, 2), (2, 2), (2, 2))], ref=_mp_forms, grad=False,
         params=dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), rescale_grad=0.5, clip_gradient=0.3, num_weights=2)),
    Case("multi_mp_sgd_mom_update", [((3,),) * 4 + ((2, 2),) * 4], ref=_mom_forms(True), grad=False,
         params=dict(lrs=(0.1, 0.2), wds=(0.01, 0.02), momentum=0.9, num_weights=2)),
    Case("preloaded_multi_sgd_update", [((3,), (3,), (2, 2), (2, 2), (2,), (2,))], ref=_pre_sgd, grad=False,
         params=dict(num_weights=2, rescale_grad=2.0), gens=[None] * 4 + [_POS, _POS]),
    Case("preloaded_multi_sgd_mom_update", [((3,),) * 3 + ((1,), (1,))], ref=_mom_forms(False), grad=False,
         params=dict(num_weights=1, momentum=0.5, clip_gradient=0.2), gens=[None] * 3 + [_POS, _POS]),
    Case("preloaded_multi_mp_sgd_update", [((3,),) * 3 + ((1,), (1,))], grad=False, gens=[None] * 3 + [_POS, _POS],
         ref=lambda *ins, **kw: _mp_forms(*ins, **kw), params=dict(num_weights=1)),
    Case("preloaded_multi_mp_sgd_mom_update", [((2, 3),) * 4 + ((1,), (1,))], ref=_mom_forms(True), grad=False,
         params=dict(num_weights=1, momentum=0.9, rescale_grad=0.5), gens=[None] * 4 + [_POS, _POS]),
]


# -- AdamW and the fused LAMB (optimizer/adamw.py, optimizer/multi_lamb.py) -----------------------------------
def _adamw_groups(per, mp):
    def ref(*ins, lrs=None, wds=None, etas=None, lr=None, wd=0.0, eta=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
            clip_gradient=-1.0, num_weights=1):
        lrs, wds, etas = lrs or (lr,), wds or (wd,), etas or (eta,)
        rescale, outs = float(ins[-1][0]), []
        for i in range(num_weights):
            w, g, m, v = ins[per * i: per * i + 4]
            w32 = (ins[per * i + 4] if mp else w).astype(np.float64)
            g = _clip(g.astype(np.float64) * rescale, clip_gradient)
            m2, v2 = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g
            outs.append((w32 - etas[i] * (lrs[i] * m2 / (np.sqrt(v2) + epsilon) + wds[i] * w32)).astype(w.dtype))
        return tuple(outs) if len(outs) > 1 else outs[0]
    return ref


def _multi_lamb(per, mp):
    def ref(*ins, learning_rates, wds, step_count, num_tensors=1, beta1=0.9, beta2=0.999, epsilon=1e-6,
            rescale_grad=1.0, lower_bound=-1.0, upper_bound=-1.0, clip_gradient=-1.0, bias_correction=True):
        outs = []
        for i in range(num_tensors):
            weight, g, m, v = ins[per * i: per * i + 4]
            w = ins[per * i + 4] if mp else weight
            d = _lamb1(w, g, m, v, step_count[i], wds[i], beta1, beta2, epsilon, bias_correction, rescale_grad,
                       clip_gradient)
            r1 = np.array([np.linalg.norm(weight.astype(np.float64))])
            outs.append(_lamb2(w, d, r1, np.array([np.linalg.norm(d)]), learning_rates[i], lower_bound, upper_bound)
                        .astype(weight.dtype))
        return tuple(outs) if len(outs) > 1 else outs[0]
    return ref


_SCALE = uniform(0.5, 1.5)
_ADAMW = [uniform(), uniform(), uniform(), uniform(0, 1)]
CASES += [
    Case("_adamw_update", [(S,) * 4 + ((1,),)], ref=_adamw_groups(4, False), grad=False, gens=[*_ADAMW, _SCALE],
         params=dict(lr=0.1, eta=0.5, wd=0.01, clip_gradient=0.6)),
    Case("_mp_adamw_update", [(S,) * 5 + ((1,),)], ref=_adamw_groups(5, True), grad=False,
         gens=[*_ADAMW, uniform(), _SCALE], params=dict(lr=0.1, eta=1.0, beta1=0.8), dtypes=("float32",)),
    Case("_multi_adamw_update", [(S,) * 4 + ((2,),) * 4 + ((1,),)], ref=_adamw_groups(4, False), grad=False,
         gens=[*_ADAMW, *_ADAMW, _SCALE], params=dict(lrs=(0.1, 0.2), wds=(0.0, 0.1), etas=(1.0, 0.5), num_weights=2)),
    Case("_multi_mp_adamw_update", [(S,) * 5 + ((1,),)], ref=_adamw_groups(5, True), grad=False,
         gens=[*_ADAMW, uniform(), _SCALE], params=dict(lrs=(0.1,), wds=(0.01,), etas=(0.9,)), dtypes=("float32",)),
    Case("_multi_lamb_update", [(S,) * 4 + ((2,),) * 4], ref=_multi_lamb(4, False), grad=False, gens=_ADAMW * 2,
         params=dict(learning_rates=(0.1, 0.2), wds=(0.01, 0.0), step_count=(1, 4), num_tensors=2, upper_bound=0.8)),
    Case("_multi_mp_lamb_update", [(S,) * 5], ref=_multi_lamb(5, True), grad=False, gens=[*_ADAMW, uniform()],
         params=dict(learning_rates=(0.1,), wds=(0.01,), step_count=(3,), bias_correction=False, clip_gradient=0.5),
         dtypes=("float32",)),
]
