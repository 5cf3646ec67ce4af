"""The blast radius of a compiler change: compile a corpus on the CPU under two compilers or option sets,
normalise every stage, and report what changed (``tilescope blast-radius``, see ``docs/blast-radius.md``)."""
