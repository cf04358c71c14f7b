"""A reusable Apertium translator for agents: one persistent pipeline, null-flush mode, cached by prefix.

`apertium -u eng-spa` costs ~0.3 s a call, nearly all of it start-up. This module starts the pair's pipeline
once (the `.mode` file run with `-z`, so every stage flushes at a NUL byte) and then translates a sentence in
a few milliseconds. Identical inputs (the same source prefix asked for twice) are answered from a cache.
If the persistent pipeline cannot be started or dies, it falls back to one `apertium` process per call.

Part of the harness package, hence of the base image: agents import it as `harness.baselines.apertium`.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import threading
from collections import OrderedDict
from pathlib import Path

_ESCAPE = re.compile(r"([\\\[\]^$/@<>{}])")
_UNESCAPE = re.compile(r"\\(.)|[\[\]]")  # escaped char, or the bracket of a superblank
MODE_DIRS = (Path("/usr/share/apertium/modes"), Path("/usr/local/share/apertium/modes"))


class ApertiumError(RuntimeError):
    """Apertium is missing or failed."""


def _find_mode(pair: str) -> Path | None:
    for d in MODE_DIRS:
        if (d / f"{pair}.mode").is_file():
            return d / f"{pair}.mode"
    return None


class Apertium:
    """Translate text with an Apertium pair (`eng-spa`); thread-safe; results cached (LRU, `cache_size`)."""

    def __init__(self, pair: str = "eng-spa", cache_size: int = 20000, timeout_s: float = 30.0,
                 persistent: bool = True) -> None:
        if shutil.which("apertium") is None:
            raise ApertiumError("apertium is not installed (apt-get install apertium apertium-eng-spa)")
        self.pair = pair
        self.timeout_s = timeout_s
        self.cache_size = cache_size
        self.cache: OrderedDict[str, str] = OrderedDict()
        self.calls = 0
        self.hits = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._persistent = bool(persistent and _find_mode(pair) is not None and shutil.which("apertium-wblank-mode"))

    # -- public API ---------------------------------------------------------------------------------------
    def translate(self, text: str) -> str:
        """The translation of `text` (whitespace-normalized, one line)."""
        key = " ".join(text.split())
        if not key:
            return ""
        with self._lock:
            cached = self.cache.get(key)
            if cached is not None:
                self.cache.move_to_end(key)
                self.hits += 1
                return cached
            self.calls += 1
            out = self._translate_persistent(key) if self._persistent else None
            if out is None:
                out = self._translate_once(key)
            out = " ".join(out.split())
            self.cache[key] = out
            if len(self.cache) > self.cache_size:
                self.cache.popitem(last=False)
            return out

    def close(self) -> None:
        """Stop the persistent pipeline."""
        with self._lock:
            self._stop()

    def __del__(self) -> None:  # best effort
        try:
            self._stop()
        except Exception:
            pass

    # -- internals -----------------------------------------------------------------------------------------
    def _start(self) -> subprocess.Popen[bytes]:
        mode = _find_mode(self.pair)
        script = subprocess.run(["apertium-wblank-mode", "-z", str(mode)], capture_output=True, text=True,
                                timeout=30, check=True).stdout
        # $1 is the generator option (-n: no unknown-word marks, like `apertium -u`), $2 the tagger's extra option
        return subprocess.Popen(["bash", "-c", script, "apertium", "-n", ""], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, 15)
            except OSError:
                proc.kill()
            proc.wait(timeout=5)

    def _translate_persistent(self, text: str) -> str | None:
        """Translate through the persistent pipeline; None (and fall back for good) if it fails."""
        try:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = self._start()
            proc = self._proc
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(_ESCAPE.sub(r"\\\1", text).replace("~", "[~]").encode("utf-8") + b"\n\0")
            proc.stdin.flush()
            buf = b""
            fd = proc.stdout.fileno()
            while not buf.endswith(b"\0"):
                ready, _, _ = select.select([fd], [], [], self.timeout_s)
                if not ready:
                    raise ApertiumError(f"no answer from the apertium pipeline in {self.timeout_s} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise ApertiumError("the apertium pipeline exited")
                buf += chunk
            return _UNESCAPE.sub(lambda m: m.group(1) or "", buf.rstrip(b"\0").decode("utf-8", errors="replace"))
        except (OSError, subprocess.SubprocessError, ApertiumError, AssertionError):
            self._stop()
            self._persistent = False
            return None

    def _translate_once(self, text: str) -> str:
        proc = subprocess.run(["apertium", "-u", self.pair], input=text + "\n", capture_output=True, text=True,
                              timeout=self.timeout_s)
        if proc.returncode != 0:
            raise ApertiumError(f"apertium -u {self.pair} failed: {proc.stderr.strip()[:200]}")
        return proc.stdout
