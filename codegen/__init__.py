"""torchlet's operator code generator.

Layers (each a module): reader (YAML with positions) -> schema / native /
formula (the model) -> analysis / derivatives (grouping, delegates, binding,
saved variables) -> api (derived names) -> emit (templates) -> writer; cli
drives them.  See docs/GENERATOR.md.
"""
