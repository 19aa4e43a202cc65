"""MosaicML Streaming's own MDSWriter and MDSReader (mosaicml-streaming, pinned in requirements.txt),
for the tests and scripts/bench-mds.sh.

`import streaming` imports its whole package: its dataloader needs transformers and its vision
datasets torchvision, which this environment does not install (requirements.txt says why). The
writer and reader modules are imported here without the package's two __init__ files, so the code
that writes and reads MDS shards is Streaming's own, unchanged."""

import importlib.util
import os
import sys
import types

_LOADED = {}


def writer_and_reader():
    """(MDSWriter, MDSReader); ImportError when mosaicml-streaming is not installed."""
    if not _LOADED:
        spec = importlib.util.find_spec("streaming") if "streaming" not in sys.modules else None
        if "streaming" in sys.modules:
            root = sys.modules["streaming"].__path__[0]
        elif spec is None:
            raise ImportError("mosaicml-streaming is not installed (scripts/install-deps.sh installs it)")
        else:
            root = os.path.dirname(spec.origin)
        for name, sub in (("streaming", ""), ("streaming.base", "base")):
            if name not in sys.modules:
                package = types.ModuleType(name)
                package.__path__ = [os.path.join(root, sub)]
                sys.modules[name] = package
        from streaming.base.format.mds.reader import MDSReader
        from streaming.base.format.mds.writer import MDSWriter
        _LOADED.update(writer=MDSWriter, reader=MDSReader)
    return _LOADED["writer"], _LOADED["reader"]
