"""Names derived from the model.  Every derived name is computed here, and
only here, so that emitters and diagnostics agree on them."""

from __future__ import annotations

from .schema import FunctionSchema, OperatorName


def cpp_name(func: FunctionSchema) -> str:
    """The C/C++ name of a function without its overload: ``add_``, ``add_out``."""
    name = str(func.name.name)
    if func.is_out_fn():
        name += "_out"
    return name


def default_kernel_name(func: FunctionSchema) -> str:
    """The kernel an entry without ``dispatch:`` is implemented by
    (its implicit CompositeImplicitAutograd kernel)."""
    return cpp_name(func)


def op_symbol(name: OperatorName) -> str:
    """A C identifier for one overload: ``add.Tensor`` -> ``add_Tensor``.

    An operator of another namespace than ``aten`` carries it, so an operator
    library's names never meet torchlet's: ``myops::scale`` -> ``myops_scale``."""
    s = str(name.name)
    if name.namespace and name.namespace != "aten":
        s = f"{name.namespace}_{s}"
    return f"{s}_{name.overload_name}" if name.overload_name else s


def backward_node_prefix(name: str) -> str:
    """``mul`` -> ``MulBackward``; ``_foo_forward`` -> ``FooBackward`` (PyTorch's rule).

    A counter is appended per prefix (``MulBackward0``, ``MulBackward1``).
    """
    camel = "".join(p.title() for p in name.split("_"))
    return (camel + "Backward").replace("ForwardBackward", "Backward")


def return_names(func: FunctionSchema) -> tuple[str, ...]:
    """How derivative formulas refer to the outputs of ``func``.

    ``self`` for the return of an in-place function, the out argument's name
    for out functions, the declared name (``name_return`` when it clashes with
    an argument), else ``result`` or ``result0``, ``result1`` ...
    """
    names = []
    arg_names = {a.name for a in func.arguments.flat_all}
    n = len(func.returns)
    for i, r in enumerate(func.returns):
        if func.name.name.inplace:
            name = "self"
        elif func.is_out_fn() and i < len(func.arguments.out):
            name = func.arguments.out[i].name
        elif r.name:
            name = f"{r.name}_return" if r.name in arg_names else r.name
        else:
            name = "result" if n == 1 else f"result{i}"
        names.append(name)
    return tuple(names)


def saved_output_names(func: FunctionSchema) -> tuple[str, ...]:
    """Names of outputs as saved by a backward node (``self`` becomes ``result``)."""
    return tuple("result" if n == "self" else n for n in return_names(func))
