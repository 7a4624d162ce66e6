"""The lock files: hashed exact pins of what pyproject.toml asks for, matching what is installed.

`make venv` (so `make test` and `make run`) installs requirements-dev.lock and a deploy installs
requirements.lock, both with `pip install --require-hashes`; `make lock` regenerates them. These
tests fail when pyproject.toml changed without `make lock`, or when the running environment was
not installed from the lock file, so every machine runs the versions that were tested.
"""

import importlib.metadata
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_LOCK = ROOT / "requirements.lock"
DEV_LOCK = ROOT / "requirements-dev.lock"
LOCKS = [RUNTIME_LOCK, DEV_LOCK]

HASH = re.compile(r"--hash=sha256:([0-9a-f]+)")


@dataclass(frozen=True)
class Pin:
    requirement: Requirement
    hashes: tuple[str, ...]

    @property
    def version(self) -> Version | None:
        """The version of an exact `==` pin, otherwise None."""
        specifiers = list(self.requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
            return None
        return Version(specifiers[0].version)


def parse_lock(text: str) -> dict[str, Pin]:
    """The requirements of a pip requirements file, by normalized name, with their hashes."""
    pins: dict[str, Pin] = {}
    logical = re.sub(r"\\\n", " ", text)
    for raw in logical.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        hashes = tuple(HASH.findall(line))
        requirement = Requirement(re.sub(r"\s--hash=\S+", "", line).strip())
        pins[canonicalize_name(requirement.name)] = Pin(requirement, hashes)
    return pins


def _pyproject() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def _project_requirements(group: str) -> list[Requirement]:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    if group == "runtime":
        return [Requirement(text) for text in project["dependencies"]]
    return [Requirement(text) for text in project["optional-dependencies"][group]]


def _build_requirements() -> list[Requirement]:
    build_system = _pyproject()["build-system"]
    assert isinstance(build_system, dict)
    return [Requirement(text) for text in build_system["requires"]]


def _lock(path: Path) -> dict[str, Pin]:
    return parse_lock(path.read_text())


def _unmet(requirements: list[Requirement], pins: dict[str, Pin]) -> list[str]:
    """Requirements that the lock does not pin exactly to a version they accept."""
    unmet = []
    for requirement in requirements:
        pin = pins.get(canonicalize_name(requirement.name))
        if pin is None or pin.version is None:
            unmet.append(f"{requirement} (not pinned with ==)")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            unmet.append(f"{requirement} (locked at {pin.version})")
    return unmet


def test_parse_lock_reads_pins_markers_and_hashes() -> None:
    pins = parse_lock(
        "# header\n"
        "Django==5.2.1 \\\n    --hash=sha256:ab12 \\\n    --hash=sha256:cd34\n"
        "    # via -r pyproject.toml\n"
        "async-timeout==5.0.1 ; python_full_version < '3.11.3' \\\n    --hash=sha256:ef56\n"
        "redis>=5\n"
    )

    assert set(pins) == {"django", "async-timeout", "redis"}
    assert pins["django"].version == Version("5.2.1")
    assert pins["django"].hashes == ("ab12", "cd34")
    assert str(pins["async-timeout"].requirement.marker) == 'python_full_version < "3.11.3"'
    assert pins["redis"].version is None
    assert pins["redis"].hashes == ()


@pytest.mark.parametrize("lock", LOCKS, ids=lambda path: path.name)
def test_lock_file_says_how_to_regenerate_it(lock: Path) -> None:
    header = lock.read_text().split("\n", 3)[:3]

    assert any("make lock" in line for line in header if line.startswith("#"))


@pytest.mark.parametrize("lock", LOCKS, ids=lambda path: path.name)
def test_every_locked_requirement_is_an_exact_pin_with_hashes(lock: Path) -> None:
    pins = _lock(lock)

    assert len(pins) > 20
    assert [name for name, pin in pins.items() if pin.version is None] == []
    assert [name for name, pin in pins.items() if not pin.hashes] == []
    assert [
        name for name, pin in pins.items() if any(len(digest) != 64 for digest in pin.hashes)
    ] == []


@pytest.mark.parametrize("lock", LOCKS, ids=lambda path: path.name)
def test_runtime_and_build_requirements_are_locked(lock: Path) -> None:
    pins = _lock(lock)

    assert _unmet(_project_requirements("runtime"), pins) == []
    # `pip install --no-deps --no-build-isolation` builds the project with the locked setuptools.
    assert _unmet(_build_requirements(), pins) == []


def test_dev_requirements_are_locked() -> None:
    assert _unmet(_project_requirements("dev"), _lock(DEV_LOCK)) == []


def test_dev_requirements_stay_out_of_the_runtime_lock() -> None:
    runtime = _lock(RUNTIME_LOCK)
    runtime_names = {canonicalize_name(r.name) for r in _project_requirements("runtime")}
    dev_only = [
        requirement.name
        for requirement in _project_requirements("dev")
        if canonicalize_name(requirement.name) not in runtime_names
        and canonicalize_name(requirement.name) in runtime
    ]

    assert dev_only == []


def test_the_runtime_lock_agrees_with_the_dev_lock() -> None:
    """A deploy runs the versions that `make test` tested."""
    runtime, dev = _lock(RUNTIME_LOCK), _lock(DEV_LOCK)

    assert sorted(set(runtime) - set(dev)) == []
    assert {
        name: (str(pin.version), str(dev[name].version))
        for name, pin in runtime.items()
        if pin.version != dev[name].version
    } == {}


def test_installed_versions_match_the_dev_lock() -> None:
    """The environment running the tests was installed from requirements-dev.lock."""
    dev = _lock(DEV_LOCK)
    listed = _project_requirements("runtime") + _project_requirements("dev")
    mismatched: dict[str, tuple[str, str]] = {}
    for requirement in listed:
        pin = dev[canonicalize_name(requirement.name)]
        if pin.requirement.marker is not None and not pin.requirement.marker.evaluate():
            continue
        installed: Version | None
        try:
            installed = Version(importlib.metadata.version(requirement.name))
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed != pin.version:
            mismatched[requirement.name] = (str(pin.version), str(installed))

    assert mismatched == {}
