"""``Block``: the base of every Gluon layer and model (MXNet 1.9's naming, registration and file format).

A Block registers the Blocks and Parameters assigned to its attributes, names
its parameters with an automatic prefix (``dense0_weight``) from the enclosing
``name_scope``, and saves them under structural keys (``0.weight``).
:class:`HybridBlock` and :class:`SymbolBlock` live in :mod:`.hybrid` and are
re-exported here.

>>> import mxasync as mx
>>> class Net(mx.gluon.Block):
...     def __init__(self, **kwargs):
...         super().__init__(**kwargs)
...         with self.name_scope():
...             self.w = self.params.get('w', shape=(2,))
...     def forward(self, x):
...         return x * self.w.data()
>>> net = Net(prefix='net_'); net.initialize(mx.init.One())
>>> list(net.collect_params().keys()), net(mx.nd.array([1, 2])).asnumpy().tolist()
(['net_w'], [1.0, 2.0])
"""

from __future__ import annotations

import re
import threading
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .. import ndarray as nd
from ..base import MXAsyncError
from ..ndarray._save_load import load_any
from ..ndarray.ndarray import NDArray
from ..symbol._naming import NameManager, Prefix
from .parameter import Parameter, ParameterDict, _brief_print_list

__all__ = ["Block", "HybridBlock", "SymbolBlock", "HookHandle"]


class _BlockScope:
    """The ``with block.name_scope():`` scope: gives child blocks their prefixes (``dense0_``)."""

    _current = threading.local()

    def __init__(self, block: Block):
        self._block = block
        self._counter: dict[str, int] = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = NameManager.current().get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


class HookHandle:
    """Returned by ``register_forward_hook``; ``detach()`` (or leaving its ``with``) removes the hook."""

    _ids = iter(range(1 << 62))

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = next(HookHandle._ids)

    def attach(self, hooks_dict, hook) -> None:
        if self._hooks_dict_ref is not None:
            raise AssertionError("The same handle cannot be attached twice.")
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = hooks_dict

    def detach(self) -> None:
        if self._hooks_dict_ref is not None:
            self._hooks_dict_ref.pop(self._id, None)
            self._hooks_dict_ref = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def _indent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    return "\n".join([lines[0]] + [" " * num_spaces + line for line in lines[1:]])


class Block:
    """Base class of all layers and models; subclasses define ``forward``."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children: OrderedDict = OrderedDict()
        self._reg_params: dict = {}
        self._forward_hooks: OrderedDict = OrderedDict()
        self._forward_pre_hooks: OrderedDict = OrderedDict()

    def __repr__(self) -> str:
        body = "\n".join(f"  ({key}): {_indent(repr(block), 2)}" for key, block in self.__dict__.items()
                         if isinstance(block, Block))
        return f"{self.__class__.__name__}(\n{body}\n)"

    def __setattr__(self, name, value) -> None:
        """Register Blocks and Parameters assigned as attributes."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to {type(value)}"
                                "is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError(f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                                     "parameters between blocks, please set 'params' at Block construction "
                                     "instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self) -> None:
        children = set(self._children.values())

        def _find(data):
            if isinstance(data, (list, tuple)):
                return any(_find(x) for x in data)
            if isinstance(data, dict):
                return any(_find(x) for x in data.values())
            return isinstance(data, Block) and data not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if _find(v):
                    warnings.warn(f'"{self.name}" is an unregistered container with Blocks. Note that Blocks inside '
                                  "the list, tuple or dict will not be registered automatically. Make sure to "
                                  "register them using register_child() or switching to nn.Sequential/"
                                  "nn.HybridSequential instead.", stacklevel=3)

    def _alias(self) -> str:
        return self.__class__.__name__.lower()

    @property
    def prefix(self) -> str:
        """The prefix of this block's parameter names (``dense0_``)."""
        return self._prefix

    @property
    def name(self) -> str:
        """The prefix without its trailing ``_``."""
        return self._name

    def name_scope(self) -> _BlockScope:
        """Scope in which child blocks get names prefixed by this block's prefix."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters (not its children's; see :meth:`collect_params`)."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """This block's and its descendants' parameters, those whose names match regex ``select``."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix: str = "") -> dict:
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    # -- files ----------------------------------------------------------------------------
    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save the parameters (averaged over contexts) under structural keys (``0.weight``)."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse.items()}
        nd.save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename: str) -> None:
        """Deprecated: saves under full parameter names minus this block's prefix."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you want load from "
                      "SymbolBlock later, please use export instead. For details, see "
                      "https://mxnet.apache.org/tutorials/gluon/save_load_params.html", stacklevel=2)
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may resolve this error.") \
                from None

    def load_parameters(self, filename: str, ctx=None, allow_missing: bool = False, ignore_extra: bool = False,
                        cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load a file written by :meth:`save_parameters` (or by the older ``save_params``)."""
        loaded = load_any(filename)  # either shape semantics, as MXNet's retry in the other mode allows
        if isinstance(loaded, list):
            raise ValueError(f"load_parameters: '{filename}' holds unnamed arrays, not parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            # the legacy format (full names): what save_params and ParameterDict.save write
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            by_param = defaultdict(list)
            for k, v in params.items():
                by_param[v].append(k)
            for name, param in params.items():
                if not any(p in loaded for p in by_param[param]):
                    raise AssertionError(f"Parameter '{name}' is missing in file '{filename}', which contains "
                                         f"parameters: {_brief_print_list(loaded.keys())}. Set allow_missing=True "
                                         "to ignore missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ValueError(f"Parameter '{name}' loaded from file '{filename}' is not present in "
                                     f"ParameterDict, which contains parameters {_brief_print_list(params.keys())}. "
                                     "Set ignore_extra=True to ignore. ")
                continue
            params[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def load_params(self, filename: str, ctx=None, allow_missing: bool = False, ignore_extra: bool = False) -> None:
        """Deprecated alias of :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # -- children and hooks ---------------------------------------------------------------
    def register_child(self, block: Block, name: str | None = None) -> None:
        """Register ``block`` as a child (named by its position when ``name`` is None)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook) -> HookHandle:
        """``hook(block, inputs)`` runs before each ``forward``."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook) -> HookHandle:
        """``hook(block, inputs, outputs)`` runs after each ``forward``."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        """Install ``callback(node_name, op_name, array)`` on the hybridized blocks below (see
        :meth:`HybridBlock.register_op_hook`); a plain Block runs no graph of its own."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def apply(self, fn) -> Block:
        """Call ``fn(block)`` on every descendant, then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=None, ctx=None, verbose: bool = False, force_reinit: bool = False) -> None:
        """Initialize every parameter of this block and its children."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active: bool = True, **kwargs) -> None:
        """Hybridize the HybridBlocks among the children (a plain Block itself stays imperative)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype) -> None:
        """Cast every parameter (and the children's) to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def __call__(self, *args):
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args):
        """Override to define the computation."""
        raise NotImplementedError

    def summary(self, *inputs) -> None:
        """Print each block's output shapes and parameter counts for a forward pass on ``inputs``, in
        MXNet 1.9.1's format (its columns, ``Dense-1`` numbering from the first layer, shapes as tuples,
        containers (``Sequential``, ``HybridSequential``) not listed). A hybridized block is refused, as
        MXNet refuses it: its children's hooks would not run.

        >>> import mxasync as mx
        >>> net = mx.gluon.nn.Dense(2, in_units=3); net.initialize()
        >>> net.summary(mx.nd.zeros((1, 3)))  # doctest: +NORMALIZE_WHITESPACE
        --------------------------------------------------------------------------------
                Layer (type)                                Output Shape         Param #
        ================================================================================
                       Input                                      (1, 3)               0
                     Dense-1                                      (1, 2)               8
        ================================================================================
        Parameters in forward computation graph, duplicate included
           Total params: 8
           Trainable params: 8
           Non-trainable params: 0
        Shared params in forward computation graph: 0
        Unique parameters in model: 8
        --------------------------------------------------------------------------------
        """
        summary, seen, hooks = OrderedDict(), set(), []

        def shapes(x):
            if isinstance(x, NDArray):
                return tuple(x.shape)
            if isinstance(x, (list, tuple)):
                return [shapes(i) for i in x]
            return x

        def shape_str(x) -> str:
            got = shapes(x)
            return str(got)[1:-1] if isinstance(got, list) else str(got)

        def register(block):
            if getattr(block, "_active", False):
                raise MXAsyncError(f'"{block.name}" must not be hybridized to print summary. '
                                   "(call summary() before hybridize(), as in MXNet)")
            if type(block).__name__ in ("Sequential", "HybridSequential"):
                return  # a container: its children are listed

            def hook(blk, _, outputs):
                key = f"{blk.__class__.__name__}-{len(summary)}"  # "Input" is the first entry: layers count from 1
                n_params = n_trainable = 0
                shared = 0
                for p in blk.params.values():
                    n = int(np.prod(p.data().shape)) if p._data is not None else 0
                    n_params += n
                    if p.grad_req != "null":
                        n_trainable += n
                    if p in seen:
                        shared += n
                    seen.add(p)
                summary[key] = {"output_shape": shape_str(outputs), "n_params": n_params,
                                "trainable": n_trainable, "shared": shared}

            hooks.append(block.register_forward_hook(hook))

        summary["Input"] = {"output_shape": shape_str(list(inputs)), "n_params": 0, "trainable": 0, "shared": 0}
        try:
            self.apply(register)
            self(*inputs)
            line = "-" * 80
            print(line)
            print(f"{'Layer (type)':>20}  {'Output Shape':>42} {'Param #':>15}")
            print("=" * 80)
            total = trainable = shared = 0
            for layer, info in summary.items():
                print(f"{layer:>20}  {info['output_shape']:>42} {info['n_params']:>15}")
                total += info["n_params"]
                trainable += info["trainable"]
                shared += info["shared"]
            print("=" * 80)
            print(f"Parameters in forward computation graph, duplicate included\n   Total params: {total}\n"
                  f"   Trainable params: {trainable}\n   Non-trainable params: {total - trainable}")
            print(f"Shared params in forward computation graph: {shared}")
            print(f"Unique parameters in model: {total - shared}")
            print(line)
        finally:
            for h in hooks:
                h.detach()


from .hybrid import HybridBlock, SymbolBlock  # noqa: E402  (HybridBlock builds on Block)
