"""Test configuration: hypothesis profiles.

``quick`` (default, inside ``make test``) keeps example counts small so that the suite runs in minutes on 2 cores;
``deep`` (``LRNNKIT_PROFILE=deep``, used by ``make test-slow``) runs many more examples.
"""
import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("quick", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("deep", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("LRNNKIT_PROFILE", "quick"))

os.environ.setdefault("TRITON_INTERPRET", "1")

HAVE_GAP = shutil.which("gap") is not None


def pytest_collection_modifyitems(config, items):
    skip_gap = pytest.mark.skip(reason="GAP not installed (apt-get install gap-core gap-libs)")
    for item in items:
        if "gap" in item.keywords and not HAVE_GAP:
            item.add_marker(skip_gap)
