"""The moto S3 server with its conditional writes made atomic, as S3's are.

moto checks `If-Match` / `If-None-Match` and then stores, in one of many request
threads: two writers holding the same ETag can both pass the check, and the second
silently replaces the first. S3 itself never does, and the tests of versioned writes
rely on it, so here every object write and delete runs under one lock.
"""

import sys
import threading

from moto.s3.responses import S3Response
from moto.server import main

_mutations = threading.Lock()


def _serialised(method):
    def run(self, *args, **kwargs):
        with _mutations:
            return method(self, *args, **kwargs)

    return run


for _name in ("put_object", "delete_object"):
    setattr(S3Response, _name, _serialised(getattr(S3Response, _name)))

if __name__ == "__main__":
    sys.exit(main())
