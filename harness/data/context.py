"""Extra context of a dataset (IWSLT 2026: the papers of the talks) as a participant sees it.

A dataset's `context: FILE` lists documents, one path a line. A participant's container gets a copy of them
read-only under `CONTEXT_ROOT` with the list rewritten to the mounted paths (`CONTEXT_LIST`), and the variable
`CONTEXT_ENV` naming that list; a submission's `prepare:` output is mounted read-only at `PREPARED_ROOT`
(`PREPARED_ENV`). The evaluation server's info (`GET /info`) names the same documents.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from harness.config import Dataset, context_documents

CONTEXT_ROOT = "/context"
CONTEXT_LIST_NAME = "context.list"
CONTEXT_ENV = "HARNESS_CONTEXT_LIST"
PREPARED_ROOT = "/prepared"
PREPARED_ENV = "HARNESS_PREPARED_DIR"


def mounted_name(index: int, document: Path) -> str:
    """Where document `index` of a list lies under the context folder (numbered: two lists may share a name)."""
    return f"docs/{index:03d}-{document.name}"


def context_paths(dataset: Dataset, root: str | None = None) -> list[str]:
    """The dataset's context documents as a participant names them: under `root` (a container's mount), or the
    host's absolute paths without one; [] when the dataset has no context."""
    if dataset.context is None:
        return []
    docs = context_documents(dataset.context)
    if root is None:
        return [str(d) for d in docs]
    return [f"{root.rstrip('/')}/{mounted_name(i, d)}" for i, d in enumerate(docs)]


def context_list_path(root: str = CONTEXT_ROOT) -> str:
    """The rewritten list file inside the mount."""
    return f"{root.rstrip('/')}/{CONTEXT_LIST_NAME}"


def stage_context(dataset: Dataset, folder: Path, root: str = CONTEXT_ROOT) -> Path:
    """Copy the dataset's documents into `folder` (made world-readable) with the list rewritten to their paths
    under `root`, where `folder` is to be mounted; returns `folder`."""
    assert dataset.context is not None
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(context_documents(dataset.context)):
        target = folder / mounted_name(i, doc)
        shutil.copyfile(doc, target)
        os.chmod(target, 0o444)
    (folder / CONTEXT_LIST_NAME).write_text("".join(f"{p}\n" for p in context_paths(dataset, root)),
                                            encoding="utf-8")
    os.chmod(folder / CONTEXT_LIST_NAME, 0o444)
    for d in (folder, folder / "docs"):
        os.chmod(d, 0o555)
    return folder


def host_context_list(dataset: Dataset, folder: Path) -> Path:
    """A list of the documents' absolute host paths, written in `folder` (joint and local runs, no mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CONTEXT_LIST_NAME
    path.write_text("".join(f"{p}\n" for p in context_paths(dataset)), encoding="utf-8")
    return path
