"""The custom-operator layer of torchlet.library (PyTorch's torch._library):

* ``infer_schema``: a schema from a function's annotations;
* ``custom_ops``: ``custom_op`` and ``CustomOpDef`` (one row of the operator
  table with a kernel per backend, a fake kernel at Meta, an autograd kernel,
  an ADInplaceOrView kernel that bumps versions of mutated arguments);
* ``fake_impl``: ``register_fake`` and ``get_ctx``;
* ``autograd``: ``register_autograd`` (the user's backward runs as a node of
  the C autograd engine, through ``torchlet.autograd.Function``);
* ``kernels``: ``register_kernel``, ``register_autocast``;
* ``opcheck``: the checks an operator author runs in tests.
"""
