"""goalgui as a desktop program (issue 13): its resources found the one way in a checkout and in an
installed wheel, the validators passing, the menu entry installed and removed, `--version`."""

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from goalgui import __version__, assets, desktop

from .conftest import ROOT, cli_env, goalgui_cmd

RESOURCES = ["goalgui.svg", assets.desktop_entry(), assets.metainfo(), "themes/dark.json",
             *[assets.icon_png(n) for n in assets.ICON_SIZES]]


def test_every_resource_is_found_through_importlib_resources_in_the_checkout():
    for name in RESOURCES:
        assert assets.find(name).read_bytes(), name
        with assets.on_disk(name) as path:
            assert path.is_file() and str(path).startswith(str(ROOT / "goalgui" / "resources"))
    with pytest.raises(FileNotFoundError, match="nosuch.png is missing"):
        assets.find("nosuch.png")
    assert assets.palette("dark")["Window"] == "#2b2b2b"


def test_the_pngs_are_the_svg_rendered_at_each_size(qapp):
    """scripts/make_icons.py was run after the SVG last changed: each PNG is its size and is the SVG's
    own rendering (a few channel steps of difference allowed for the renderer's rounding)."""
    from PySide6.QtGui import QImage

    from goalgui.ui.icon import render_svg

    for size in assets.ICON_SIZES:
        png = QImage()
        assert png.loadFromData(assets.find(assets.icon_png(size)).read_bytes())
        assert (png.width(), png.height()) == (size, size)
        drawn = render_svg(size)
        png = png.convertToFormat(QImage.Format.Format_ARGB32)
        step = max(1, size // 32)
        worst = max(abs(a - b) for x in range(0, size, step) for y in range(0, size, step)
                    for a, b in zip(png.pixelColor(x, y).getRgb(), drawn.pixelColor(x, y).getRgb()))
        assert worst <= 8, (size, worst)


def test_the_window_and_tray_use_the_resource_icon(qapp):
    from goalgui.ui.icon import app_icon

    icon = app_icon()
    sizes = {(s.width(), s.height()) for s in icon.availableSizes()}
    assert {(n, n) for n in assets.ICON_SIZES} <= sizes
    plain, waiting = app_icon().pixmap(64, 64).toImage(), app_icon(waiting=True).pixmap(64, 64).toImage()
    assert plain.pixelColor(60, 4) != waiting.pixelColor(60, 4)  # the badge, top right


def test_the_desktop_entry_and_the_metainfo_pass_their_validators(tmp_path):
    for path in (ROOT / "goalgui" / "resources" / assets.desktop_entry(),):
        out = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
        assert out.returncode == 0 and "error" not in out.stdout, out.stdout
    out = subprocess.run(["appstreamcli", "validate", "--no-net", "--pedantic",
                          str(ROOT / "goalgui" / "resources" / assets.metainfo())], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "W:" not in out.stdout and "E:" not in out.stdout and "P:" not in out.stdout, out.stdout


def test_the_menu_entry_is_installed_for_this_goalgui_and_removed_without_touching_others(tmp_path):
    env = cli_env(tmp_path / "home")
    env["XDG_DATA_HOME"] = str(tmp_path / "share")
    other = tmp_path / "share" / "icons" / "hicolor" / "48x48" / "apps" / "someone-else.png"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"not ours")
    out = subprocess.run(goalgui_cmd("--install-desktop-entry"), env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    entry = tmp_path / "share" / "applications" / assets.desktop_entry()
    text = entry.read_text()
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    command = exec_line[len("Exec="):].strip('"')
    assert os.path.isabs(command) and os.access(command, os.X_OK), exec_line
    check = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    for target in desktop.targets(tmp_path / "share").values():
        assert target.is_file() and oct(target.stat().st_mode & 0o777) == "0o644", target
    assert (tmp_path / "share" / "metainfo" / assets.metainfo()).read_text() == assets.read_text(assets.metainfo())
    out = subprocess.run(goalgui_cmd("--uninstall-desktop-entry"), env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "removed 12 file(s)" in out.stdout, out.stdout + out.stderr
    assert not any(t.exists() for t in desktop.targets(tmp_path / "share").values())
    assert other.read_bytes() == b"not ours"
    again = subprocess.run(goalgui_cmd("--uninstall-desktop-entry"), env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "no desktop entry" in again.stdout


def test_an_exec_path_with_spaces_is_quoted_as_the_spec_asks(tmp_path):
    text = desktop.entry_text("/opt/my apps/goalgui")
    assert 'Exec="/opt/my apps/goalgui"' in text and "TryExec=/opt/my apps/goalgui" in text
    entry = tmp_path / assets.desktop_entry()
    entry.write_text(text)
    assert subprocess.run(["desktop-file-validate", str(entry)], capture_output=True).returncode == 0


def test_version():
    out = subprocess.run(goalgui_cmd("--version"), capture_output=True, text=True, timeout=60,
                         env=cli_env(Path("/nonexistent")))
    assert out.returncode == 0 and out.stdout.strip() == f"goalgui {__version__}"


def test_the_wheel_and_sdist_install_in_a_fresh_venv_and_open_the_window(tmp_path):
    """`python -m build` makes an sdist and a wheel built from it; the wheel, installed into a new
    venv, has its resources and the rehearsal scripts, both launchers, and opens the window
    offscreen on the rehearsal. (Its dependencies are this venv's, on the new venv's path after
    its own site-packages, so nothing is downloaded but the build's setuptools.)"""
    dist = tmp_path / "dist"
    out = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    wheel = next(dist.glob("goalgui-*.whl"))
    sdist = next(dist.glob("goalgui-*.tar.gz"))
    names = zipfile.ZipFile(wheel).namelist()
    for name in RESOURCES:
        assert f"goalgui/resources/{name}" in names, name
    assert "goalgui/providers/scripts/rehearsal.json" in names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[console_scripts]\ngoalgui = goalgui.cli:main" in entry_points
    assert "[gui_scripts]\ngoalgui-window = goalgui.cli:window_main" in entry_points
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert any(m.endswith(f"goalgui/resources/{assets.metainfo()}") for m in members)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    out = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    Path(site, "zz-deps.pth").write_text(ours + "\n")  # after the venv's own site-packages
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(GOALGUI_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen")
    where = subprocess.run([str(python), "-c", "import goalgui, goalgui.assets as a; print(goalgui.__file__);"
                            "print(a.find('goalgui.svg'))"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert all(line.startswith(site) for line in where.stdout.split()), where.stdout  # the wheel's, not the checkout's
    assert (venv / "bin" / "goalgui-window").is_file()
    version = subprocess.run([str(venv / "bin" / "goalgui"), "--version"], capture_output=True, text=True, env=env)
    assert version.stdout.strip() == f"goalgui {__version__}"
    run = subprocess.run([str(venv / "bin" / "goalgui"), "run", "Write a short report", "--model",
                          "scripted:rehearsal", "--window", "--exit-when-done"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]


def test_exec_paths_with_percent_backslash_dollar_or_quote_pass_the_validator(tmp_path):
    """Found by a hostile review: a % was taken for a field code and a backslash left a quote open."""
    for i, path in enumerate(("/home/u/100%/bin/goalgui", "/home/u/a\\b/goalgui", "/home/u/$x/goalgui",
                              '/home/u/q"/goalgui', "/home/u/`t`/goalgui")):
        entry = tmp_path / f"e{i}" / assets.desktop_entry()
        entry.parent.mkdir()
        entry.write_text(desktop.entry_text(path))
        check = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
        assert check.returncode == 0 and "error" not in check.stdout, (path, check.stdout)
    with pytest.raises(ValueError, match="line break"):
        desktop.entry_text("/home/u/x\nExec=evil")


def test_the_desktop_flags_go_alone():
    for args in (("--install-desktop-entry", "--uninstall-desktop-entry"), ("--uninstall-desktop-entry", "runs")):
        out = subprocess.run(goalgui_cmd(*args), capture_output=True, text=True, timeout=60,
                             env=cli_env(Path("/nonexistent")))
        assert out.returncode == 2 and "go alone" in out.stderr
