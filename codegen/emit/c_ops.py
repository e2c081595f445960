"""The generated C between a Python call and a kernel (docs/CODEGEN_C.md).

Outputs (paths relative to ``generated/``):

* ``csrc/ops_<name>.c``: every overload of one operator name (``add``,
  ``add_``, ``add.out`` -> ``ops_add.c``): entry points, redispatch entry
  points, boxing wrappers, boxed adapters, structured kernels, the weak
  definitions of derived meta functions (``api_c.derived_meta_builder``),
  BackendSelect kernels and ``tl_ops_register_<name>()``;
* ``csrc/register_all.c``: ``tl_ops_register_all()``;
* ``include/ops/<name>.h``: C prototypes of everything above plus the
  hand-written kernels (``tl_native_*``, ``tl_meta_*``, ``tl_impl_*``) the
  generated code calls, so a missing kernel is a compile/link error, one
  header per operator family (``include/tl_ops_base.h`` the part they
  share); ``include/tl_ops.h`` includes them all (an operator library's
  holds its families itself). Generated files include only the families
  they use (:mod:`codegen.emit.includes`);
* ``cdef/ops.h``: the cffi declarations of the entry points.

Every name and C type comes from :mod:`codegen.api_c`.  One YAML entry
feeds one block of each header and one ``ops_<name>.c``, so editing it
changes only those lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import api_c
from ..analysis import NativeFunctionsGroup
from ..diagnostics import CodegenError, DiagnosticSink
from ..model import Model
from ..native import DeviceCheckType, NativeFunction
from . import EmitContext

C_COMMENT = ("/*", " * ", "")  # the templates close the comment after their own lines


# argument kinds whose boxing helpers are in tl_glue_ext.h
EXT_KINDS = frozenset({"scalar_list", "opt_scalar_list", "storage"})


def _base_name(f: NativeFunction) -> str:
    """The file an overload lives in: its name without ``_`` / overload."""
    n = f.func.name.name
    return f"__{n.base}__" if n.dunder_method else n.base


@dataclass
class _Op:
    """Template slots for one overload."""

    f: NativeFunction
    schema: str
    schema_c: str
    qualified: str
    handle: str
    unambiguous: str
    entry: str
    redispatch: str
    redispatch_name: str
    fn_type: str
    typedef: str
    boxed: str
    wrapper: str
    ret_type: str
    ret_kind: str
    fail: str
    params: str
    kparams: str
    names: str
    keyset: str
    pushes: list[str]
    ret_pops: list[str]
    pop_decls: list[str]
    pops: list[str]
    releases: list[str]
    call_lines: list[str]
    kernels: list[dict] = field(default_factory=list)  # registrations
    skipped: list[str] = field(default_factory=list)  # keys not registered, with why
    structured: list[dict] = field(default_factory=list)  # generated structured kernels
    backend_select: dict | None = None
    guards: list[dict] = field(default_factory=list)  # CUDA registrations run under a device guard
    natives: list[str] = field(default_factory=list)  # prototypes of hand-written kernels
    needs_ext: bool = False  # calls helpers of tl_glue_ext.h


def _ret_pops(r: api_c.CReturn, where: str, masked: bool = False) -> list[str]:
    if r.kind == "tensor":
        return ["tl_stack_pop_tensor(&st_, &r_)"]
    if r.kind == "none":
        return []
    if r.kind == "tensors":
        # an operator with an `output_mask` leaves masked results undefined (None from a
        # Python kernel or mode, NULL in C), as PyTorch's *_backward operators do
        pop = "tl_stack_pop_opt_tensor" if masked else "tl_stack_pop_tensor"
        return [f"{pop}(&st_, {p.name})" for p in reversed(r.out_params)]
    if r.kind == "value":
        pop = api_c.VALUE_BOXING[r.out_params[0].ctype[:-2]][0]
        return [f"{pop}(&st_, ret)"]
    if r.kind == "tensor_list":
        return ["tl_glue_pop_tensor_list_ret(&st_, ret, ret_len)"]
    if r.kind == "tuple":  # the last element is on top
        pops = []
        for kind, ps in reversed(api_c.tuple_elements(r)):
            if kind == "tensor":
                pops.append(f"tl_stack_pop_tensor(&st_, {ps[0].name})")
            elif kind == "tensor_list":
                pops.append(f"tl_glue_pop_tensor_list_ret(&st_, {ps[0].name}, {ps[1].name})")
            else:
                pops.append(f"{api_c.VALUE_BOXING[ps[0].ctype[:-2]][0]}(&st_, {ps[0].name})")
        return pops
    raise api_c.UnsupportedCType(f"{where}: boxing of '{r.kind}' returns is not supported yet")


def _call_lines(f: NativeFunction, r: api_c.CReturn, args: list[api_c.CArg]) -> list[str]:
    """The boxed adapter's call of the unboxed kernel and the push of its returns."""
    call_args = ", ".join(["ks"] + [e for a in args for e in a.call_args()])
    fn = f"(({api_c.kernel_typedef_name(f)})k_->unboxed)"
    if r.kind == "tensor":
        return [f"tl_tensor *r_ = {fn}({call_args});", "rc_ = r_ ? tl_stack_push_tensor_steal(st, r_) : -1;"]
    if r.kind == "none":
        return [f"rc_ = {fn}({call_args});"]
    if r.kind == "tensors":
        locs = [f"r{i}_" for i in range(len(r.out_params))]
        lines = [f"tl_tensor *{' = NULL, *'.join(locs)} = NULL;"]
        lines.append(f"rc_ = {fn}({call_args}, {', '.join('&' + x for x in locs)});")
        for x in locs:
            lines.append(f"if (rc_ == 0) rc_ = tl_stack_push_tensor_steal(st, {x}); else tl_tensor_release({x});")
        return lines
    if r.kind == "value":
        ct = r.out_params[0].ctype[:-2]
        push = api_c.VALUE_BOXING[ct][1]
        return [f"{ct} r_;", f"rc_ = {fn}({call_args}, &r_);", f"if (rc_ == 0) rc_ = {push}(st, r_);"]
    if r.kind == "tensor_list":
        return [
            "tl_tensor **r_ = NULL;",
            "int64_t rn_ = 0;",
            f"rc_ = {fn}({call_args}, &r_, &rn_);",
            "if (rc_ == 0) {",
            "    rc_ = tl_stack_push_tensor_list(st, r_, rn_);",
            "    tl_tensor_list_free(r_, rn_);",
            "}",
        ]
    if r.kind == "tuple":
        # locals per element; after the call every element is pushed (or released on failure)
        decls, refs, pushes = [], [], []
        for i, (kind, ps) in enumerate(api_c.tuple_elements(r)):
            x = f"r{i}_"
            if kind == "tensor":
                decls.append(f"tl_tensor *{x} = NULL;")
                refs.append(f"&{x}")
                pushes.append(f"if (rc_ == 0) rc_ = tl_stack_push_tensor_steal(st, {x}); else tl_tensor_release({x});")
            elif kind == "tensor_list":
                decls += [f"tl_tensor **{x} = NULL;", f"int64_t {x}n = 0;"]
                refs += [f"&{x}", f"&{x}n"]
                pushes.append(f"if (rc_ == 0) rc_ = tl_stack_push_tensor_list(st, {x}, {x}n);")
                pushes.append(f"tl_tensor_list_free({x}, {x}n);")
            else:
                ct = ps[0].ctype[:-2]
                decls.append(f"{ct} {x};")
                refs.append(f"&{x}")
                pushes.append(f"if (rc_ == 0) rc_ = {api_c.VALUE_BOXING[ct][1]}(st, {x});")
        return decls + [f"rc_ = {fn}({call_args}, {', '.join(refs)});"] + pushes
    raise api_c.UnsupportedCType(f"{f.func.name}: boxing of '{r.kind}' returns is not supported yet")


def native_c_names(m: Model) -> dict[tuple[int, str], str]:
    """C names of hand-written kernels that differ from ``tl_native_<K>``.

    PyTorch names one C++ kernel for several overloads (``add_relu`` for
    ``add_relu.Tensor`` and ``add_relu.Scalar``: C++ overloading). C has no
    overloading: the first function (YAML order) naming ``K`` keeps
    ``tl_native_K``; a later one whose C signature differs gets
    ``tl_native_K__<its unambiguous name>`` (``tl_native_add_relu__add_relu_Scalar``).
    Keys are ``(id(function), K)``."""
    first: dict[str, str] = {}
    renamed: dict[tuple[int, str], str] = {}
    for f in m.functions:
        g = m.group_of(f)
        structured_group = g is not None and g.structured
        try:
            sig = None
            for key, md in m.kernels(f).items():
                if structured_group and (md.structured or md.delegate is not None):
                    continue
                if sig is None:
                    sig = api_c.c_signature(f, "K", with_ks=True)
                seen = first.setdefault(md.kernel, sig)
                if seen != sig:
                    renamed[(id(f), md.kernel)] = f"{api_c.native_name(md.kernel)}__{api_c.unambiguous_name(f)}"
        except api_c.UnsupportedCType:
            continue  # reported by _op
    return renamed


def _op(m: Model, f: NativeFunction, path: str, native_names: dict[tuple[int, str], str]) -> _Op:
    args = api_c.c_args(f)
    r = api_c.c_return(f)
    params = api_c.c_params(f)
    keys = [e for a in args if (e := a.keyset_expr()) is not None]
    op = _Op(
        f=f,
        schema=str(f.func),
        schema_c=api_c.c_string(str(f.func)),
        qualified=api_c.qualified_name(f),
        handle=api_c.op_handle_name(f),
        unambiguous=api_c.unambiguous_name(f),
        entry=api_c.c_signature(f),
        redispatch=api_c.c_signature(f, with_ks=True),
        redispatch_name=api_c.c_redispatch_name(f),
        fn_type=api_c.kernel_typedef_name(f),
        typedef=api_c.kernel_typedef(f),
        boxed=api_c.boxed_adapter_name(f),
        wrapper=api_c.boxing_wrapper_name(f),
        ret_type=r.ctype,
        ret_kind=r.kind,
        fail=r.fail,
        params=api_c.c_param_decls(params),
        kparams=api_c.c_param_decls(api_c.c_params(f, with_ks=True)),
        names=api_c.c_param_names(params),
        keyset=" | ".join(keys) if keys else "0",
        pushes=[a.push("&st_") for a in args],
        ret_pops=_ret_pops(r, str(f.func.name), any(a.name == "output_mask" for a in f.func.arguments.flat_all)),
        pop_decls=[d for a in args for d in a.pop_decls()],
        pops=[a.pop("st") for a in reversed(args)],
        releases=[s for a in args for s in a.release()],
        call_lines=_call_lines(f, r, args),
    )
    op.needs_ext = any(a.kind in EXT_KINDS for a in args)
    g = m.group_of(f)
    structured_group = g is not None and g.structured
    kernels = m.kernels(f)
    structured_keys: list[str] = []
    for key, md in kernels.items():
        enum = api_c.dispatch_key_enum(key)
        is_structured = structured_group and (md.structured or md.delegate is not None)
        if key == "CUDA" and is_structured:
            # ufunc groups: the generated CUDA launcher (codegen/emit/ufunc_cuda.py);
            # others: a hand-written tl_impl_<kernel>_cuda (kernels/cuda/), weak
            # like every impl, so a missing one leaves CUDA unregistered. Not
            # for an operator library's (namespaced) operators: CPU only
            if not f.func.name.namespace:
                structured_keys.append(key)
            else:
                op.skipped.append(f"{key}: {md.kernel} (no CUDA kernels are generated for it)")
            continue
        # CUDA registers the unstructured kernels it shares with another
        # backend (metadata and device-generic ones: `CPU, CUDA, Meta: view`);
        # a CUDA-only kernel name (`CUDA: layer_norm_cuda`) is registered when
        # kernels/cuda defines its (weak) function, and silently not otherwise:
        # most of PyTorch's CUDA-only kernels have none here
        if enum is None:
            op.skipped.append(f"{key}: {md.kernel} (no {key} backend in the runtime)")
            continue
        if key == "CUDA" and not any(k != "CUDA" and o.kernel == md.kernel for k, o in kernels.items()):
            fn = native_names.get((id(f), md.kernel), api_c.native_name(md.kernel))
            op.kernels.append({**_reg(key, enum, fn, path, [fn]), "optional": True})
            proto = api_c.c_signature(f, fn, with_ks=True) + ";"
            if proto not in op.natives:
                op.natives.append(proto)
            continue
        if is_structured:
            if key not in api_c.STRUCTURED_BACKENDS and key != "CUDA":
                op.skipped.append(f"{key}: {md.kernel} (structured kernels are generated for {', '.join(api_c.STRUCTURED_BACKENDS)} and Meta)")
                continue
            structured_keys.append(key)
            continue
        fn = native_names.get((id(f), md.kernel), api_c.native_name(md.kernel))
        op.kernels.append(_reg(key, enum, fn, path, [fn]))
        proto = api_c.c_signature(f, fn, with_ks=True) + ";"
        if proto not in op.natives:
            op.natives.append(proto)
    if structured_keys:
        assert g is not None
        for key in structured_keys + ["Meta"]:
            sk = _structured_kernel(f, g, key, kernels)
            op.needs_ext = op.needs_ext or sk["needs_ext"]
            op.structured.append(sk)
            # a derived meta function is defined (weak) in this file: never missing
            needed = ([] if api_c.derived_meta_builder(g) else [sk["meta"]]) + ([sk["impl"]] if sk["impl"] else [])
            op.kernels.append(_reg(key, api_c.DISPATCH_KEY_ENUM[key], sk["name"], path, needed))
    if api_c.is_factory(f):
        dev = next(a for a in args if a.arg.name == "device")
        op.backend_select = {"name": api_c.backend_select_name(f), "device": dev.name}
        op.kernels.append(_reg("BackendSelect", "TL_KEY_BACKEND_SELECT", op.backend_select["name"], path, []))
    _guard_cuda(f, op, args, path)
    return op


def _guard_device(f: NativeFunction, args: list[api_c.CArg]) -> tuple[list[str], list[str]]:
    """Where a CUDA kernel's device guard takes its device (PyTorch's
    RegisterDispatchKey): a factory's ``device`` (its TensorOptions), else
    the tensor-like arguments in the order self, out, positional; the first
    one on a CUDA device wins (PyTorch's structured kernels reset the guard
    to the output's device, which is the same device; a CPU 0-dim ``self``
    beside CUDA tensors then still runs on theirs). Returns the argument
    names and the C expressions, first choice first; empty: no guard."""
    by_name = {a.arg.name: a for a in args}
    a = f.func.arguments
    if a.tensor_options is not None:
        dev = by_name["device"]
        return [dev.name], [f"tl_cuda_device_of_arg({dev.name})"]
    order = ([a.self_arg] if a.self_arg is not None else []) + list(a.out) + list(a.positional)
    names, exprs = [], []
    for arg in order:
        c = by_name[arg.name]
        if not arg.type.is_tensor_like() or c.name in names:
            continue
        names.append(c.name)
        if c.kind in ("tensor", "opt_tensor"):
            exprs.append(f"tl_cuda_device_of({c.name})")
        else:
            exprs.append(f"tl_cuda_device_of_list({c.name}, {c.name}_len)")
    return names, exprs


def _device_checks(f: NativeFunction, args: list[api_c.CArg]) -> list[str]:
    """PyTorch's device check of a CUDA kernel (``device_check: ExactSame``,
    the default; ``NoCheck`` where TensorIterator or the kernel checks, as
    for CPU scalars beside device tensors): the out and positional tensor
    arguments, in that order, on one device. One tensor needs no check."""
    if f.device_check is not DeviceCheckType.ExactSame:
        return []
    by_name = {a.arg.name: a for a in args}
    checks = []
    for arg in list(f.func.arguments.out) + list(f.func.arguments.positional):
        c = by_name[arg.name]
        if c.kind in ("tensor", "opt_tensor"):
            checks.append(f"tl_cuda_check_device(&first_, {c.name})")
        elif c.kind in ("tensor_list", "opt_tensor_list"):
            checks.append(f"tl_cuda_check_device_list(&first_, {c.name}, {c.name}_len)")
    if len(checks) == 1 and "_list(" not in checks[0]:
        return []
    return checks


def _guard_cuda(f: NativeFunction, op: _Op, args: list[api_c.CArg], path: str) -> None:
    """Every CUDA registration of a function with ``device_guard`` (the
    default) registers a generated wrapper that runs the kernel under a
    device guard (tl_cuda_guard.h): the kernel launches and allocates on its
    inputs' device and the caller's current device is restored after."""
    if not f.device_guard:
        return
    names, exprs = _guard_device(f, args)
    if not exprs:
        return
    for k in op.kernels:
        if k["key"] != "CUDA":
            continue
        name = f"tl_guarded_{op.unambiguous}_CUDA"
        op.guards.append({"name": name, "fn": k["fn"], "args": names, "first": exprs[0], "more": exprs[1:],
                          "checks": _device_checks(f, args)})
        k["fn"] = name
        k["debug"] = f"{name} registered at generated/{path}"


def _reg(key: str, enum: str, fn: str, path: str, needed: list[str]) -> dict:
    """One registration; ``needed`` are the (weak) hand-written functions it calls."""
    return {
        "key": key,
        "enum": enum,
        "fn": fn,
        "debug": f"{fn} registered at generated/{path}",
        "needs": " || ".join(f"TL_KERNEL_MISSING({n})" for n in needed),
        "needed": ", ".join(needed),
        "needed_list": list(needed),
        "optional": False,
    }


def _cuda_kernel(kernels: dict) -> str:
    """the structured CUDA impl's kernel name: the yaml's, with ``_cuda`` added
    where CUDA shares the CPU's name (``CPU, CUDA: sum_out`` -> sum_out_cuda;
    a ufunc's generated launcher likewise); ``CUDA: mm_out_cuda`` as written"""
    cuda, cpu = kernels["CUDA"].kernel, kernels.get("CPU")
    return cuda + "_cuda" if cpu is not None and cpu.kernel == cuda else cuda


def _structured_kernel(f: NativeFunction, g: NativeFunctionsGroup, key: str, kernels: dict) -> dict:
    out = g.out
    assert out is not None
    n_out = len(out.func.arguments.out)
    if n_out > STRUCTURED_MAX_OUTPUTS:
        raise api_c.UnsupportedCType(f"{out.func.name}: structured kernels have at most {STRUCTURED_MAX_OUTPUTS} outputs")
    kind = f.func.kind().value
    non_out = [api_c.c_arg(a, str(f.func.name)) for a in f.func.arguments.non_out]
    names = ", ".join(p.name for a in non_out for p in a.params)
    if kind == "out":
        proposals = [(i, api_c.c_ident(a.name)) for i, a in enumerate(f.func.arguments.out)]
    elif kind == "inplace":
        if f.func.arguments.self_arg is None:
            raise api_c.UnsupportedCType(f"{f.func.name}: an inplace structured function needs a self argument")
        if n_out != 1:
            raise api_c.UnsupportedCType(f"{f.func.name}: an inplace structured function with several outputs")
        proposals = [(0, "self")]
    else:
        proposals = []
    impl_kernel = next(md.kernel for k, md in kernels.items() if k in api_c.STRUCTURED_BACKENDS)
    pre = api_c.precompute_name(g)
    replaced = {n for n, _ in out.precomputed.replace} if out.precomputed else set()
    impl_args = [p.name for a in non_out if a.arg.name not in replaced for p in a.params]
    if pre:
        impl_args.append("&pre_")
    impl_args += [f"s_.outputs[{i}]" for i in range(n_out)]
    r = api_c.c_return(f)
    return {
        "name": api_c.structured_kernel_name(f, key),
        "kparams": api_c.c_param_decls(api_c.c_params(f, with_ks=True)),
        "kind": {"functional": "TL_STRUCTURED_FUNCTIONAL", "inplace": "TL_STRUCTURED_INPLACE", "out": "TL_STRUCTURED_OUT"}[kind],
        "device": api_c.DEVICE_ENUM[key],
        "meta_only": 1 if key == "Meta" else 0,
        "proposals": proposals,
        "meta": api_c.meta_name(g),
        "meta_args": names + (", &pre_" if pre else ""),
        "impl": None if key == "Meta" else api_c.impl_name(_cuda_kernel(kernels) if key == "CUDA" else impl_kernel),
        "impl_args": ", ".join(impl_args),
        "pre_type": pre,
        # several outputs: the kernel returns int and hands each output to ret<i>
        "rets": [p.name for p in r.out_params] if n_out > 1 else [],
        "key": key,
        "needs_ext": bool(pre) or n_out > 1,
    }


# tl_structured holds this many outputs (TL_STRUCTURED_MAX_OUTPUTS)
STRUCTURED_MAX_OUTPUTS = 4


def _files(m: Model) -> dict[str, list[NativeFunction]]:
    by_file: dict[str, list[NativeFunction]] = {}
    for f in m.functions:
        by_file.setdefault(_base_name(f), []).append(f)
    return by_file


def _group_types(m: Model, fs: list[NativeFunction]) -> list[str]:
    """The ``precomputed:`` structs of the structured groups whose out= function is in ``fs``."""
    types = []
    for f in fs:
        g = m.group_of(f)
        if g is not None and g.structured and g.out is f and (pre := api_c.precompute_name(g)):
            types.append(f"typedef struct {pre} {{ {' '.join(api_c.precompute_fields(g))} }} {pre};")
    return types


def _derived_metas(m: Model, fs: list[NativeFunction]) -> list[str]:
    """Weak definitions of the meta functions the generator derives for the
    structured groups whose out= function is in ``fs``."""
    defs = []
    for f in fs:
        g = m.group_of(f)
        if g is not None and g.structured and g.out is f and (d := api_c.derived_meta_definition(g)):
            defs.append(d)
    return defs


def _group_protos(m: Model, base: str, fs: list[NativeFunction]) -> list[str]:
    """meta / impl prototypes of the structured groups whose out= function is in ``fs``."""
    protos: list[str] = []
    for f in fs:
        g = m.group_of(f)
        if g is None or not g.structured or g.out is not f:
            continue
        # a derived meta function is defined weak in ops_<name>.c: declared plain here so
        # that a hand-written one (which sees this declaration) is strong and replaces it
        protos.append(("" if api_c.derived_meta_builder(g) else "TL_WEAK ") + api_c.meta_prototype(g))
        for key, md in m.kernels(f).items():
            if key in api_c.STRUCTURED_BACKENDS or (key == "CUDA" and not f.func.name.namespace):
                p = "TL_WEAK " + api_c.impl_prototype(g, _cuda_kernel(m.kernels(f)) if key == "CUDA" else md.kernel)
                if p not in protos:
                    protos.append(p)
    return protos


def emit_c_ops(ctx: EmitContext) -> dict[str, str]:
    m = ctx.model
    out: dict[str, str] = {}
    blocks = []
    needs_ext_header = False
    sink = DiagnosticSink()
    native_names = native_c_names(m)
    for base, fs in _files(m).items():
        path = f"csrc/ops_{base}.c"
        ops = []
        for f in fs:
            try:
                ops.append(_op(m, f, path, native_names))
            except api_c.UnsupportedCType as e:
                sink.error(f.fpos("func"), str(e), "see docs/CODEGEN_C.md for what the C emitter supports")
        if not ops:
            continue
        register = api_c.register_fn_name(base)
        # the helpers of the corpus-only conventions (Scalar[], Storage, precomputed:,
        # several structured outputs) live in tl_glue_ext.h, included only where used
        ext = any(op.needs_ext for op in ops)
        includes = (['"tl_glue_ext.h"'] if ext else []) + (['"tl_cuda_guard.h"'] if any(op.guards for op in ops) else [])
        out[path] = ctx.render("c_ops.c.j2", C_COMMENT, name=base, ops=ops, register=register,
                               extra_includes=includes,
                               derived_metas=_derived_metas(m, fs))
        group_types = _group_types(m, fs)
        needs_ext_header = needs_ext_header or bool(group_types)
        blocks.append({"name": base, "ops": ops, "register": register, "group_protos": _group_protos(m, base, fs),
                       "group_types": group_types})
    if sink.diagnostics:
        raise CodegenError(sink.diagnostics)
    out["csrc/register_all.c"] = ctx.render("c_register_all.c.j2", C_COMMENT, blocks=blocks, register_all=api_c.REGISTER_ALL)
    out["include/tl_ops.h"] = ctx.render(
        "c_tl_ops.h.j2", C_COMMENT, blocks=blocks, register_all=api_c.REGISTER_ALL,
        extra_includes=['"tl_glue_ext.h"'] if needs_ext_header else [],
        guard=f"TL_OPS_H_{ctx.namespace.upper()}" if ctx.extension else "TL_OPS_H", library=ctx.extension)
    if not ctx.extension:  # torchlet's tl_ops.h is the umbrella of per-operator headers
        out["include/tl_ops_base.h"] = ctx.render("c_tl_ops_base.h.j2", C_COMMENT, register_all=api_c.REGISTER_ALL)
        for b in blocks:
            out[f"include/ops/{b['name']}.h"] = ctx.render(
                "c_tl_op.h.j2", C_COMMENT, block=b, guard=f"TL_OPS_{b['name'].upper()}_H",
                extra_includes=['"tl_glue_ext.h"'] if b["group_types"] else [])
    if not ctx.extension:  # an operator library has no cffi module
        out["cdef/ops.h"] = ctx.render("c_cdef_ops.h.j2", C_COMMENT, blocks=blocks, register_all=api_c.REGISTER_ALL)
    return out
