"""The typed, bounded format of what the student's process sends the grader.

Nothing the student's process sends is unpickled or executed: a message is a JSON tree
(``null``, booleans, numbers, strings, lists, objects with string keys) in which a few
tagged objects stand for tuples, dicts with other keys, sets, complex numbers, numpy
arrays and scalars.  Arrays travel as ``.npy`` bytes read with ``allow_pickle=False`` and
only of plain dtypes (booleans, integers, floats, complex numbers, strings); an array of
Python objects travels as a list of its items with its shape.

Every limit is checked before anything is built: the message's size (by the channel,
before reading it), the JSON's depth and node count, each array's declared shape against
the bytes actually sent, and how many values of one set or keys of one dict share a hash.
Decoding a message of ``n`` bytes takes time and memory linear in ``n`` (JSON has no shared
references to expand), so a 0.1 MB message decodes in milliseconds, whatever is in it.  Without
the hash check it did not: Python's hash of an integer is the integer modulo ``2**61 - 1``, so
the multiples of that number all share one, and a set of 32,000 of them took 5.7 s to build
(quadratic: a 16 MB message of them, hours).

Layout: ``b"VRW1"``, an 8-byte little-endian length and the JSON text, then for each array
its 8-byte length and its ``.npy`` bytes.
"""

from __future__ import annotations

import io
import json
import struct

__all__ = ["WireError", "encode", "decode", "MAX_NODES", "MAX_DEPTH"]

MAGIC = b"VRW1"
MAX_DEPTH = 40  # nesting of lists / dicts
MAX_NODES = 2_000_000  # values in one message
MAX_JSON = 16 * 2**20  # bytes of a message's values other than arrays (arrays are compact)
MAX_SAME_HASH = 64  # values of one set (or keys of one dict) that may share a hash
_LEN = struct.Struct("<Q")
_KINDS = set("biufcUS")  # numpy dtype kinds accepted: no objects, no structured records, no void


class WireError(ValueError):
    """A message that is not in the format, or over one of its limits."""


# --------------------------------------------------------------------------- encoding (either side)


def encode(value) -> bytes:
    """``value`` as a message (raises :class:`WireError` for what the format cannot carry)."""
    arrays: list[bytes] = []
    tree = _to_tree(value, arrays, 0)
    text = json.dumps(tree, allow_nan=True, separators=(",", ":")).encode("utf-8")
    parts = [MAGIC, _LEN.pack(len(text)), text]
    for data in arrays:
        parts += [_LEN.pack(len(data)), data]
    return b"".join(parts)


def _npy(arr) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr if arr.flags.c_contiguous else arr.copy(order="C"), allow_pickle=False)
    return buf.getvalue()


def _to_tree(value, arrays: list, depth: int):
    import numpy as np

    if depth > MAX_DEPTH:
        raise WireError("the value is nested too deeply")
    t = type(value)
    if value is None or t in (bool, str):
        return value
    if t is int:
        return value if abs(value) < 2**63 else {"__int__": str(value)}
    if t is float:
        return value
    if t is complex:
        return {"__complex__": [value.real, value.imag]}
    if t is list:
        return [_to_tree(v, arrays, depth + 1) for v in value]
    if t is tuple:
        return {"__tuple__": [_to_tree(v, arrays, depth + 1) for v in value]}
    if t in (set, frozenset):
        return {"__set__": [_to_tree(v, arrays, depth + 1) for v in value]}
    if t is dict:
        if all(type(k) is str and not k.startswith("__") for k in value):
            return {k: _to_tree(v, arrays, depth + 1) for k, v in value.items()}
        return {
            "__dict__": [[_to_tree(k, arrays, depth + 1), _to_tree(v, arrays, depth + 1)] for k, v in value.items()]
        }
    if t is np.ndarray or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            items = [_to_tree(v, arrays, depth + 1) for v in arr.ravel().tolist()]
            return {"__objects__": items, "shape": list(arr.shape)}
        if arr.dtype.kind not in _KINDS or arr.dtype.fields is not None:
            raise WireError(f"arrays of dtype {arr.dtype} are not accepted")
        arrays.append(_npy(arr))
        return {"__array__" if t is np.ndarray else "__scalar__": len(arrays) - 1}
    raise WireError(f"a {t.__name__} cannot be sent (plain data and numpy arrays only)")


# --------------------------------------------------------------------------- decoding (in the grader)


def decode(data: bytes, max_nodes: int = MAX_NODES):
    """The value of a message, built only from plain types and numpy arrays (raises :class:`WireError`)."""
    view = memoryview(data)
    if bytes(view[:4]) != MAGIC or len(view) < 12:
        raise WireError("not a message of the grader's format")
    (n,) = _LEN.unpack(view[4:12])
    if n > MAX_JSON:
        raise WireError(f"the message's values take {n} bytes, over the {MAX_JSON} the grader reads")
    if 12 + n > len(view):
        raise WireError("the message is cut short")
    try:
        tree = json.loads(bytes(view[12 : 12 + n]).decode("utf-8"))
    except RecursionError:
        raise WireError("the value is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"the message's JSON is invalid ({exc})") from None
    arrays = []
    pos = 12 + n
    while pos < len(view):
        if pos + 8 > len(view):
            raise WireError("the message is cut short")
        (size,) = _LEN.unpack(view[pos : pos + 8])
        if pos + 8 + size > len(view):
            raise WireError("an array of the message is cut short")
        arrays.append(view[pos + 8 : pos + 8 + size])
        pos += 8 + size
    budget = [max_nodes]
    return _from_tree(tree, arrays, 0, budget)


def _array(raw) -> object:
    import numpy as np

    buf = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(buf)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(buf, max_header_size=2000)
    except Exception as exc:
        raise WireError(f"an array's header is invalid ({exc})") from None
    if dtype.kind not in _KINDS or dtype.fields is not None or dtype.hasobject:
        raise WireError(f"arrays of dtype {dtype} are not accepted")
    count = 1
    for s in shape:
        count *= int(s)
    if count * dtype.itemsize != len(raw) - buf.tell():
        raise WireError("an array's shape does not match its bytes")
    buf.seek(0)
    try:
        return np.lib.format.read_array(buf, allow_pickle=False, max_header_size=2000)
    except Exception as exc:
        raise WireError(f"an array cannot be read ({exc})") from None


def _from_tree(node, arrays, depth: int, budget: list):
    import numpy as np

    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("the message holds too many values")
    if depth > MAX_DEPTH + 2:
        raise WireError("the value is nested too deeply")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_from_tree(v, arrays, depth + 1, budget) for v in node]
    if not isinstance(node, dict):
        raise WireError("the message holds an unknown kind of value")
    tags = [k for k in node if k.startswith("__")]
    if not tags:
        return {k: _from_tree(v, arrays, depth + 1, budget) for k, v in node.items()}
    tag = tags[0]
    body = node[tag]
    if tag in ("__array__", "__scalar__"):
        if type(body) is not int or not 0 <= body < len(arrays):
            raise WireError("an array reference is invalid")
        arr = _array(arrays[body])
        if tag == "__scalar__":
            if arr.ndim != 0:
                raise WireError("a scalar is not 0-dimensional")
            return arr[()]
        return arr
    if tag == "__int__" and isinstance(body, str) and len(body) <= 400:
        try:
            return int(body)
        except ValueError:
            raise WireError("an integer is invalid") from None
    if not isinstance(body, list):
        raise WireError(f"the tag {tag[:20]!r} is invalid")
    items = [_from_tree(v, arrays, depth + 1, budget) for v in body]
    if tag == "__tuple__":
        return tuple(items)
    if tag == "__set__":
        _check_hashes(items, "set")
        return set(items)
    if tag == "__complex__" and len(items) == 2 and all(isinstance(v, (int, float)) for v in items):
        return complex(items[0], items[1])
    if tag == "__dict__":
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in items):
            raise WireError("a dict is invalid")
        _check_hashes([k for k, _ in items], "dict")
        return {k: v for k, v in items}
    if tag == "__objects__":
        shape = node.get("shape")
        if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
            raise WireError("an object array's shape is invalid")
        count = 1
        for s in shape:
            count *= s
        if count != len(items):
            raise WireError("an object array's shape does not match its items")
        out = np.empty(len(items), dtype=object)
        for i, v in enumerate(items):
            out[i] = v
        return out.reshape(shape)
    raise WireError(f"the tag {tag[:20]!r} is invalid")


def _check_hashes(values: list, what: str) -> None:
    """A :class:`WireError` unless ``values`` can be hashed and few of them share a hash.

    A set (or dict) of ``n`` values sharing one hash takes time in ``n ** 2`` to build; sorting
    the hashes first takes ``n log n``, whatever they are.
    """
    try:
        hashes = sorted(hash(v) for v in values)
    except TypeError:
        raise WireError(f"a {what} holds unhashable values") from None
    run = 1
    for i in range(1, len(hashes)):
        run = run + 1 if hashes[i] == hashes[i - 1] else 1
        if run > MAX_SAME_HASH:
            raise WireError(f"a {what} holds more than {MAX_SAME_HASH} values of one hash")
