"""The Triton frontend: Triton's language layer on the engine's builder."""
