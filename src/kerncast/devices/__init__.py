"""Devices: validated GPU specs and exact occupancy.

>>> from kerncast.devices import get_device, occupancy
>>> occupancy("h100", 256, 32, 0).blocks_per_sm
8
"""

from kerncast.devices._catalog import SPEC_DIR, get_device, list_devices
from kerncast.devices._occupancy import Occupancy, occupancy
from kerncast.devices._spec import Device, load_spec

__all__ = ["SPEC_DIR", "Device", "Occupancy", "get_device", "list_devices", "load_spec", "occupancy"]
