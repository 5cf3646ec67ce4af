"""Plain records of what the codemod found and did, and their text and JSON forms."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Site:
    """One block-pointer call in the user's source and what it became."""

    line: int
    column: int
    kind: str  # make_block_ptr, advance, load, store
    became: str  # descriptor, compat, unchanged
    detail: str  # the new code, in a few words
    reason: str  # why this choice


@dataclass
class FileResult:
    """The outcome of migrating one file."""

    path: str
    original: str
    migrated: str
    sites: list[Site] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # "file:line: text" for code left alone
    error: str = ""  # set when the file could not be parsed

    @property
    def changed(self) -> bool:
        """True when the migrated text differs from the original."""
        return self.migrated != self.original

    def counts(self) -> dict[str, int]:
        """Return the number of sites per outcome."""
        out = {"descriptor": 0, "compat": 0, "unchanged": 0}
        for site in self.sites:
            out[site.became] += 1
        return out

    def to_json(self) -> dict:
        """Return the result as JSON-ready data (without the file texts)."""
        return {
            "path": self.path,
            "error": self.error,
            "changed": self.changed,
            "counts": self.counts(),
            "sites": [asdict(s) for s in self.sites],
            "notes": self.notes,
        }

    def summary(self) -> str:
        """Return the per-file site summary as terminal text."""
        if self.error:
            return f"{self.path}: error: {self.error}"
        c = self.counts()
        lines = [
            f"{self.path}: {len(self.sites)} sites ({c['descriptor']} descriptor, {c['compat']} compat, "
            f"{c['unchanged']} unchanged)"
        ]
        for s in self.sites:
            lines.append(f"  {self.path}:{s.line}:{s.column}  {s.kind:<14} -> {s.became:<10} {s.detail}")
            lines.append(f"      because {s.reason}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)
