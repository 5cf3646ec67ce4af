"""The execution engine: memory model, grid execution, numerics and the op table.

Nothing here knows about a particular DSL; frontends translate their operations into calls on
:mod:`tilescope.engine.ops` and :mod:`tilescope.engine.memory`.
"""
