"""Migration of block-pointer Triton code to tensor descriptors and ``tilescope.compat``.

Kept free of imports: :mod:`tilescope.migrate.runner` runs inside the Triton 3.8 environment,
which has neither libcst nor the rest of tilescope's dependencies.
"""
