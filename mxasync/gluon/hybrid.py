"""``HybridBlock`` and ``SymbolBlock``: blocks that run imperatively or as one cached graph.

``hybrid_forward(F, x, *args, **params)`` is written once against ``F``:
called with NDArrays it runs imperatively with ``F = mx.nd``; after
``hybridize()`` the first call traces it with ``F = mx.sym`` into a graph,
and every call runs that graph through :class:`~mxasync.executor.cached_graph.CachedGraph` on our
Executor (memory planning, engine bulking, one autograd node).  Unknown
parameter shapes are inferred from the first input by symbolic shape
inference, hybridized or not, as MXNet does.

>>> import mxasync as mx
>>> class Linear(mx.gluon.HybridBlock):
...     def __init__(self, **kwargs):
...         super().__init__(**kwargs)
...         with self.name_scope():
...             self.w = self.params.get('w', shape=(2, 0), allow_deferred_init=True, init=mx.init.One())
...     def hybrid_forward(self, F, x, w):
...         return F.FullyConnected(x, w, no_bias=True, num_hidden=2)
>>> net = Linear(); net.initialize(); net.hybridize()
>>> net(mx.nd.array([[1, 2, 3]])).asnumpy().tolist(), net.w.shape
([[6.0, 6.0]], (2, 3))
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from .. import ndarray as nd
from .. import symbol as _sym
from ..atomic import write_file
from ..executor.cached_graph import CachedGraph
from ..ndarray.ndarray import NDArray
from ..numpy import ndarray as np_ndarray
from ..util import is_np_array
from .block import Block
from .parameter import DeferredInitializationError, ParameterDict

__all__ = ["HybridBlock", "SymbolBlock"]


_SCALAR = -2  # our format code for a Python scalar input (MXNet's codes: 0 array, n>1 symbol outputs, -1 None)


def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating))


def _flatten(args, inout_str: str):
    """Nested lists of arrays/symbols -> a flat list and a format to rebuild them (MXNet's encoding).

    Inputs may also hold Python scalars (``_SCALAR``): they reach ``hybrid_forward`` as they are."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, _sym.Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if args is None:
        return [None], -1
    if inout_str == "input" and _is_scalar(args):
        return [args], _SCALAR
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the input of HybridBlock {inout_str} must be (nested) list of Symbol "
                         f"or NDArray, but got {args} of type {type(args)}")
    flat, fmts = [], []
    for i in args:
        arg, fmt = _flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0 or fmt == _SCALAR:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError("We do not support passing types that are not None when the initial HybridBlock "
                                 f"has received NoneType and has been hybridized. Received arg = {args[0]}, "
                                 f"fmt = {fmt}.")
            return None, args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for i in fmt:
        res, args = _regroup(args, i)
        ret.append(res)
    return ret, args


def _common_prefix(names: list) -> str:
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _sym_np_class():
    from ..symbol.numpy import _Symbol

    return _Symbol


def _formats_agree(stored, given) -> bool:
    """MXNet's rule: the call's structure must be the cached one, except for trailing None arguments
    (defaults left out or given as None)."""
    if given == stored:
        return True
    if not isinstance(stored, list) or not isinstance(given, list):
        return False
    short, long_ = (given, stored) if len(given) < len(stored) else (stored, given)
    return long_[:len(short)] == short and all(f == -1 for f in long_[len(short):])


def _scalar_key(flat: list) -> tuple:
    """What selects a traced graph besides the structure: each scalar input's position, type and value."""
    return tuple((i, type(x).__name__, repr(x)) for i, x in enumerate(flat) if _is_scalar(x))


def _output_kinds(outs: list, np_cls) -> list:
    """Per output, whether it is a NumPy-interface one; a mix of both kinds is a TypeError (MXNet's)."""
    kinds = [isinstance(o, np_cls) for o in outs if o is not None]
    if kinds and any(kinds) and not all(kinds):
        raise TypeError("HybridBlock outputs must all be mx.np arrays (symbols) or all classic NDArrays "
                        "(symbols), not a mix of both")
    return [isinstance(o, np_cls) for o in outs]


class HybridBlock(Block):
    """A Block whose ``hybrid_forward`` can run imperatively or as a cached symbolic graph."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None  # register_op_hook's callback and monitor_all
        self._monitor_all = False
        self._graph_key = ()  # the scalar inputs the current graph was traced with (see _select_graph)
        self._other_graphs: dict = {}  # graphs traced with other scalar inputs, by _scalar_key

    def __setattr__(self, name, value) -> None:
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def register_child(self, block, name=None) -> None:
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                             f"{type(block)}. If you are using Sequential, please try HybridSequential instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active: bool = True, backend=None, clear: bool = True, static_alloc: bool = False,
                  static_shape: bool = False, inline_limit: int = 2, forward_bulk_size=None, backward_bulk_size=None,
                  **kwargs) -> None:
        """Run as a cached graph from the next call on (MXNet 1.9.1's arguments, in its order).

        ``static_alloc``/``static_shape``: our executor always plans memory once per input
        signature, so both are honoured by construction.  ``inline_limit``: a graph of at most
        that many ops, without ``static_alloc``, runs op by op while autograd records (each op its
        own node on the tape, as MXNet inlines a small CachedOp); otherwise a recorded call is one
        ``_CachedOp`` node.  The bulk sizes are accepted (the engine bulks on its own)."""
        if backend is not None:
            raise ValueError(f"hybridize: backend={backend!r}: mxasync has no graph partitioning backends")
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape), ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/pre-hook. If "{self}" '
                          "is a child of HybridBlock, the hooks will not take effect.", stacklevel=2)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape, inline_limit=inline_limit,
                          forward_bulk_size=forward_bulk_size, backward_bulk_size=backward_bulk_size, **kwargs)

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        """``callback(node_name, op_name, array)`` for every op output (and input, ``monitor_all``) each time
        the hybridized graph runs, forward and backward (MXNet's; names are bytes as MXNet's C callback
        gives them, the array an NDArray).  Set here and on the direct children, as MXNet does; an
        imperative (not hybridized) block calls no hook."""
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = monitor_all

    def _clear_cached_op(self) -> None:
        self._cached_graph = ()
        self._cached_op = None
        self._graph_key = ()
        self._other_graphs = {}

    def _select_graph(self, flat: list) -> None:
        """Make the graph traced with these scalar inputs the current one (tracing anew when none was):
        a scalar is a constant of the graph, so each value has its own (MXNet 1.9.1 refuses scalars)."""
        key = _scalar_key(flat)
        if key == self._graph_key:
            return
        if self._cached_graph:
            self._other_graphs[self._graph_key] = (self._cached_graph, self._cached_op, self._cached_op_args,
                                                   self._in_format, self._out_format, getattr(self, "_out_np", None))
        state = self._other_graphs.pop(key, None)
        if state is None:
            self._cached_graph, self._cached_op = (), None
        else:
            (self._cached_graph, self._cached_op, self._cached_op_args, self._in_format, self._out_format,
             self._out_np) = state
        self._graph_key = key

    def cast(self, dtype) -> None:
        self._clear_cached_op()
        super().cast(dtype)

    # -- tracing and inference ----------------------------------------------------------
    def _get_graph(self, *args):
        flat, fmt = _flatten(args, "input")
        self._select_graph(flat)
        if not self._cached_graph:
            self._in_format = fmt
            arrays = [k for k, x in enumerate(flat) if x is not None and not _is_scalar(x)]
            if not arrays:
                raise ValueError(f"All args are None and we do not support such a case. Received args={args}")
            names = {k: "data" if len(arrays) == 1 else f"data{j}" for j, k in enumerate(arrays)}  # MXNet's
            inputs = [_sym.var(names[k]) if k in names else None for k in range(len(flat))]
            np_mode = is_np_array() or any(isinstance(x, np_ndarray) for x in flat)
            if np_mode:  # NumPy-interface code: F.np / F.npx on _Symbols (MXNet's use_np blocks)
                inputs = [x.as_np_ndarray() if x is not None else None for x in inputs]
            # a scalar input is a constant of the traced graph
            grouped = _regroup([x if x is not None else flat[k] for k, x in enumerate(inputs)], self._in_format)[0]
            params = {i: (j.var().as_np_ndarray() if np_mode else j.var()) for i, j in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(_sym, *grouped, **params)
            out, self._out_format = _flatten(out, "output")
            self._out_np = _output_kinds(out, _sym_np_class())
            self._cached_graph = inputs, _sym.Group(out)
        return self._cached_graph

    def _infer_attrs(self, infer_fn: str, attr: str, *args) -> None:
        inputs, out = self._get_graph(*args)
        flat, _ = _flatten(args, "input")
        given = {i.name: getattr(j, attr) for i, j in zip(inputs, flat, strict=False) if i is not None}
        arg_attrs, _, aux_attrs = getattr(out, infer_fn)(**given)
        if arg_attrs is None:
            raise ValueError(f"{infer_fn}: cannot infer every input of the graph from {given}")
        sdict = dict(zip(out.list_arguments(), arg_attrs, strict=True))
        sdict.update(zip(out.list_auxiliary_states(), aux_attrs, strict=True))
        for p in self.collect_params().values():
            if p.name in sdict:
                if attr == "dtype":
                    p._dtype = np.dtype(sdict[p.name]).type
                else:
                    setattr(p, attr, sdict[p.name])

    def infer_shape(self, *args) -> None:
        """Infer the shapes of the parameters from the inputs' shapes."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args) -> None:
        """Infer the dtypes of the parameters from the inputs' dtypes."""
        self._infer_attrs("infer_type", "dtype", *args)

    def _deferred_infer_shape(self, *args) -> None:
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError(f"Deferred initialization failed because shape cannot be inferred. {e}") from e

    # -- running ------------------------------------------------------------------------------
    def _build_cache(self, *args) -> None:
        data, out = self._get_graph(*args)
        data_names = {d.name: i for i, d in enumerate(data) if d is not None}
        params = self.collect_params()
        input_names = out.list_inputs()
        for name in input_names:
            if name not in params and name not in data_names:
                raise AssertionError(f"Unknown input to HybridBlock: {name}")
        unused = [f"{i}-th" for name, i in data_names.items() if name not in input_names]
        if unused:
            warnings.warn(f"The {', '.join(unused)} input to HybridBlock is not used by any computation. Is this "
                          "intended?", stacklevel=4)
        unused = [n for n in params.keys() if n not in input_names]
        if unused:
            warnings.warn(f"Parameter {', '.join(unused)} is not used by any computation. Is this intended?",
                          stacklevel=4)
        self._cached_op_args = [(True, data_names[n]) if n in data_names else (False, params[n])
                                for n in input_names]
        self._cached_op = CachedGraph(out, self._flags)

    def _call_cached_op(self, *args):
        flat, fmt = _flatten(args, "input")
        if self._graph_key or self._other_graphs or _scalar_key(flat):
            self._select_graph(flat)
        if self._cached_op is None:
            self._build_cache(*args)
        if self._callback is not None:
            self._cached_op.register_op_hook(self._callback, self._monitor_all)
            if any(v for k, v in self._flags if k in ("static_alloc", "static_shape")):
                warnings.warn("register_op_hook is experimental when static_alloc=True / static_shape=True  and "
                              "may not work correctly", stacklevel=3)
        if not _formats_agree(self._in_format, fmt):
            raise ValueError("The argument structure of HybridBlock does not match the cached version. Stored "
                             f"format = {fmt}, input format = {self._in_format}")
        try:
            cargs = [flat[i] if is_arg else i.data() for is_arg, i in self._cached_op_args]
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            cargs = []
            for is_arg, i in self._cached_op_args:
                if not is_arg:
                    i._finish_deferred_init()
                cargs.append(flat[i] if is_arg else i.data())
        out = self._cached_op(cargs, [is_arg for is_arg, _ in self._cached_op_args])
        if getattr(self, "_out_np", None):
            out = [o.as_np_ndarray() if is_np else o for o, is_np in zip(out, self._out_np, strict=False)]
        return _regroup(out, self._out_format)[0]

    def forward(self, x, *args):
        """Run ``hybrid_forward`` on NDArrays (imperatively or cached) or compose it on Symbols."""
        flat, _ = _flatten([x, *args], "input")
        has_sym = any(isinstance(a, _sym.Symbol) for a in flat)
        has_nd = any(isinstance(a, NDArray) for a in flat)
        if has_sym and has_nd:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types for the input. "
                             "Please check the type of the args.\n")
        if not has_sym and not has_nd:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the input. Please check "
                             "the type of the args.\n")
        if has_nd:
            ctxs = [a.context for a in flat if isinstance(a, NDArray)]
            ctx = ctxs[0]
            if self._active:
                if len(set(ctxs)) > 1:
                    raise ValueError("Find multiple contexts in the input, After hybridized, the HybridBlock only "
                                     "supports one input context. You can print the ele.ctx in the input "
                                     f"arguments to inspect their contexts. Find all contexts = {set(ctxs)}")
                with ctx:
                    return self._call_cached_op(x, *args)
            with ctx:
                try:
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                except DeferredInitializationError:
                    self._deferred_infer_shape(x, *args)
                    for v in self.params.values():
                        v._finish_deferred_init()
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                if is_np_array():
                    params = {k: v.as_np_ndarray() for k, v in params.items()}
                out = self.hybrid_forward(nd, x, *args, **params)
                _output_kinds(_flatten(out, "output")[0], np_ndarray)
                return out
        params = {i: j.var() for i, j in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_sym, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override: the computation, written against ``F`` (``mx.nd`` or ``mx.sym``)."""
        raise NotImplementedError

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` keys) that MXNet loads."""
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with this block at least "
                               "once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        write_file(sym_file, sym.tojson(remove_amp_cast))
        arg_names, aux_names = set(sym.list_arguments()), set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict[f"arg:{name}"] = param._reduce()
            elif name in aux_names:
                arg_dict[f"aux:{name}"] = param._reduce()
        params_file = f"{path}-{epoch:04d}.params"
        nd.save(params_file, arg_dict)
        return sym_file, params_file

    def optimize_for(self, x, *args, backend=None, clear=True, static_alloc=False, static_shape=False, **kwargs):
        """Hybridize and run once (mxasync has no partitioning backends; ``backend`` must be None)."""
        self.hybridize(True, backend=backend, clear=clear, static_alloc=static_alloc, static_shape=static_shape)
        return self(x, *args)


class SymbolBlock(HybridBlock):
    """A block made from a Symbol graph: its non-input arguments and aux states become parameters.

    >>> import mxasync as mx
    >>> data = mx.sym.var('data')
    >>> net = mx.gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), data)
    >>> sorted(net.collect_params().keys())
    ['fc_bias', 'fc_weight']
    """

    @staticmethod
    def imports(symbol_file: str, input_names, param_file: str | None = None, ctx=None,
                allow_missing: bool = False, ignore_extra: bool = False) -> SymbolBlock:
        """A SymbolBlock from an exported ``-symbol.json`` (and its ``.params``)."""
        sym = _sym.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [_sym.var(i, dtype=np.float32) for i in input_names]
        else:
            inputs = [_sym.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra, cast_dtype=True,
                                      dtype_source="saved")
        return ret

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, _sym.Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        out = _sym.Group(out)
        input_names = set()
        for i in syms:
            if len(i.get_internals().list_outputs()) != 1:
                raise AssertionError(f"Input symbols must be variable, but {i} is an output of operators")
            input_names.add(i.name)
        attrs = out.attr_dict()
        for i in out.list_arguments():
            if i not in input_names:
                p = self.params.get(i, allow_deferred_init=True)
                _seed_shape(p, attrs.get(i, {}))
        for i in out.list_auxiliary_states():
            if i not in input_names:
                p = self.params.get(i, grad_req="null", allow_deferred_init=True)
                _seed_shape(p, attrs.get(i, {}))
        self._cached_graph = syms, out
        len_prefix = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, _sym.Symbol):
            raise AssertionError("HybridBlock requires the first argument to forward be either Symbol or NDArray, "
                                 f"but got {type(x)}")
        flat, in_fmt = _flatten([x, *args], "input")
        if in_fmt != self._in_format:
            raise AssertionError("Invalid input format")
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat, strict=True)})
        return _regroup(list(ret), self._out_format)[0]

    def _clear_cached_op(self) -> None:
        graph = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = graph

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _seed_shape(param, attrs: dict) -> None:
    shape = attrs.get("__shape__")
    if shape and param.shape is None:
        import ast

        param._shape = tuple(ast.literal_eval(shape))
