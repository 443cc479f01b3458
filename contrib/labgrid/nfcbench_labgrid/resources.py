"""The client-side resource class for a pcscd an exporter offers (``PCSCDaemon`` there).

Registered with labgrid's target factory on import, so an environment that imports
``nfcbench_labgrid.driver`` (``imports:``) can hold a place with one.
"""

import attr

from labgrid.factory import target_factory
from labgrid.resource.common import NetworkResource


@target_factory.reg_resource
@attr.s(eq=False)
class NetworkPCSCDaemon(NetworkResource):
    """A remote pcscd's client socket relayed over TCP while the place is held.

    Args:
        port (int): the relay's TCP port on ``host`` (None while the place is not held)
        reader (str): the PC/SC reader nfcbench is to use (``pcsc:READER``)
    """

    port = attr.ib(default=None, validator=attr.validators.optional(attr.validators.instance_of(int)))
    reader = attr.ib(default="", validator=attr.validators.instance_of(str))
