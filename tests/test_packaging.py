"""The PyInstaller spec (issue 13): what the bundle carries, checked with PyInstaller's own collection
functions (the build itself is packaging/build.sh, with its smoke test), and how a frozen goalgui
starts the embedded model's child process."""

import subprocess
import sys

from goalgui import assets
from goalgui.providers import local_process

from .conftest import ROOT

SPEC = ROOT / "packaging" / "goalgui.spec"


class _Recorder:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.pure, self.scripts, self.binaries, self.datas = [], [], [], []


def test_the_spec_carries_the_resources_the_model_and_llama_cpp():
    made = {}

    def record(name):
        def make(*args, **kwargs):
            made[name] = _Recorder(*args, **kwargs)
            return made[name]
        return make

    namespace = {"SPEC": str(SPEC), "__file__": str(SPEC), **{n: record(n) for n in ("Analysis", "PYZ", "EXE", "COLLECT")}}
    exec(compile(SPEC.read_text(), str(SPEC), "exec"), namespace)  # noqa: S102 (our spec, as PyInstaller runs it)
    analysis = made["Analysis"].kwargs
    targets = {dest for _src, dest in analysis["datas"]}
    sources = [src for src, _dest in analysis["datas"]]
    assert "goalgui/resources" in targets and "goalgui/resources/icons/hicolor/512x512/apps" in targets
    assert "goalgui/providers/scripts" in targets
    assert any(src.endswith(".gguf") for src in sources)  # the embedded model's weights
    assert any("libllama.so" in src for src, _dest in analysis["binaries"])
    for module in ("goalgui.providers.openai", "goalgui.providers.anthropic", "goalgui.providers.ollama",
                   "goalgui.providers.local_process", "goalgui.engine.strategies.plan", "keyring.backends.SecretService"):
        assert module in analysis["hiddenimports"], module
    assert made["Analysis"].args[0] == [str(ROOT / "packaging" / "entry.py")]
    assert made["EXE"].kwargs["name"] == "goalgui" and made["COLLECT"].kwargs["name"] == "goalgui"
    assert set(namespace["QT_PLATFORMS"]) == {"libqxcb.so", "libqoffscreen.so"}


def test_a_frozen_goalgui_starts_the_model_child_as_itself(monkeypatch):
    assert local_process.child_command() == [sys.executable, "-m", "goalgui.providers.local_process"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert local_process.child_command() == [sys.executable, local_process.CHILD_FLAG]


def test_the_entry_script_is_goalgui_or_the_child(tmp_path):
    """packaging/entry.py run as the bundle runs it: goalgui's command by default, the child with the flag
    (given no options on stdin it exits as a child does, without starting goalgui)."""
    entry = ROOT / "packaging" / "entry.py"
    env = {"PYTHONPATH": str(ROOT), "GOALGUI_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, str(entry), "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("goalgui ")
    child = subprocess.run([sys.executable, str(entry), local_process.CHILD_FLAG], input=b"", capture_output=True,
                           env=env, timeout=60)
    assert child.stdout == b"" and b"usage: goalgui" not in child.stderr


def test_the_bundle_builds_and_passes_its_smoke_test():
    """packaging/build.sh as a person runs it (about a minute here): the bundled binary prints its
    version, runs the rehearsal and the embedded model headless, and opens the window under Xvfb."""
    out = subprocess.run(["sh", str(ROOT / "packaging" / "build.sh")], capture_output=True, text=True, timeout=1200,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for line in ("build: goalgui ", "the rehearsal ran headless", "the embedded model ran headless",
                 "the window opened on a real X server and closed cleanly", "the bundle is "):
        assert line in out.stdout, (line, out.stdout[-2000:])
    bundle = ROOT / "packaging" / "dist" / "goalgui"
    carried = {p.name for p in bundle.rglob("*")}
    assert {"libqxcb.so", "libqoffscreen.so", "goalgui.svg", assets.desktop_entry()} <= carried
    assert any(name.endswith(".gguf") for name in carried)
