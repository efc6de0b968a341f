"""References written from a peer's source or paper. NOT peers.

Each function is labelled with what it was written from.  Vector files carry their
outputs only in fields whose name says `reference`, beside (never instead of) a peer's
own answers or its unit-test data.
"""

M64 = (1 << 64) - 1


def jump_paper(key, buckets):
    """Jump consistent hash as printed in Lamping & Veach, arXiv:1406.2294 (Figure 1):
        int64 b = -1, j = 0;
        while (j < num_buckets) { b = j; key = key * 2862933555777941757ULL + 1;
            j = (b + 1) * (double(1LL << 31) / double((key >> 33) + 1)); }
        return b;
    KEY is read as uint64 (a negative Java long is its two's complement)."""
    key &= M64
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & M64
        j = int(float(b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b
