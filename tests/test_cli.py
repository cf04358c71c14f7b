"""The `harness` command line: every command of ARCHITECTURE.md is present, and only the chosen one is loaded."""

import subprocess
import sys

from harness.cli import COMMANDS, build_parser


def test_every_command_is_registered_with_its_module() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)
    for name, sp in sub.choices.items():
        assert callable(sp.get_default("_run")), name


def test_console_help_lists_commands_without_loading_them() -> None:
    code = (
        "import sys; from harness.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('harness.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "evaluate" in out.stdout and "score" in out.stdout
    assert out.stdout.strip().endswith("[]")


def test_chosen_command_alone_is_loaded_and_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "harness", "score", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "RUN_DIR_OR_LOG" in out.stdout


def test_harness_error_is_one_line_without_traceback(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "harness", "score", str(tmp_path / "missing.log")],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr and "missing.log" in out.stderr
