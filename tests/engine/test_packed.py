"""bfloat16 weights packed for oneDNN (`engine.kernels.packed`): a wide weight in column pieces keeps a
row's bits whatever rows run beside it, and saves as the plain matrix it came from."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.kernels.packed import MAX_PIECE_COLUMNS, PackedWeight, pack, packs_bfloat16, plain

COLUMNS = 1536  # SmolLM2's MLP down-projection: on the Zen 4 EPYC one packed product rounds by row count


def _weight() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return (torch.randn(592, COLUMNS, generator=generator) * 0.05).to(torch.bfloat16)


def test_a_wide_weight_packs_in_pieces_and_saves_as_it_came():
    weight = _weight()
    packed = pack(weight)
    if not packs_bfloat16():  # no bfloat16 in oneDNN here: the plain copy serves as it is
        assert packed is weight
        return
    assert isinstance(packed, PackedWeight)
    assert sum(packed.columns) == COLUMNS and max(packed.columns) <= MAX_PIECE_COLUMNS and len(packed.pieces) == 2
    assert torch.equal(plain(packed), weight)
    x = torch.randn(3, COLUMNS)
    expected = F.linear(x.to(torch.bfloat16).float(), weight.float())
    assert torch.allclose(packed(x), expected, atol=3e-2, rtol=2e-2)


def test_every_row_of_a_call_gets_the_bits_it_gets_alone():
    packed = pack(_weight())
    if not isinstance(packed, PackedWeight):
        assert not packs_bfloat16()
        return
    generator = torch.Generator().manual_seed(1)
    for rows in range(2, 17):
        for _ in range(4):  # a differing sum shows in a row's last bit in about half of random trials
            x = torch.randn(1, rows, COLUMNS, generator=generator)
            alone = torch.cat([packed(x[:, i : i + 1]) for i in range(rows)], 1)
            assert torch.equal(packed(x), alone), rows
