"""Installed on PYTHONPATH by the test suite: subprocesses of tests may only connect to loopback."""

from tests.support.network_guard import NetworkGuard

NetworkGuard().install_in_child()
