"""Mixture-of-experts MLP by blocks of tokens: nkicc's bundled internal kernel `blockwise_mm`.

nkicc's own version (not a copy) of the public neuron-team kernel of that name
(aws-neuron/nki-samples, contributed/neuron-team-kernels/blockwise_mm.py), with its signature and
conventions. Tokens have been assigned to blocks of `block_size` (B) tokens, each block to one
expert, beforehand:

  hidden_states            [T, H]          the tokens (T counts a padding token)
  expert_affinities_masked [T * E, 1]      token t's affinity to expert e at t * E + e
  gate_up_proj_weight      [E, H, 2, I]    gate (index 0) and up (index 1) projections
  down_proj_weight         [E, I, H]
  token_position_to_id     [N * B]         the token at each position of each block
  block_to_expert          [N, 1]          each block's expert
  output                   [T, H]          written: output[t] = sum over the blocks holding t of
                                           affinity * down(silu(gate(x_t)) * up(x_t))

Per block: its tokens are gathered from HBM by index (indirect DMA), transposed on the Tensor
engine so that H is the contraction dimension, projected by the block's expert (gate and up:
2 * I * H * B MACs), gated (silu(gate) * up), projected down (B * H * I MACs), scaled by the
tokens' affinities and added to the rows already in `output` (is_tensor_update_accumulating),
then scattered back by index. N blocks: N * 3 * B * H * I MACs, with I rounded up to 128 and H
a multiple of 512, as the public kernel counts them. Only its default path is modelled:
post-scaling by the affinities, lnc=1, no quantization scales, no activation checkpoints, no
skipped DMAs; the other arguments are accepted and checked.

A real blockwise_mm.py (with the common.py it imports) in an -I folder replaces this file under
the same registry entry.
"""
from collections import namedtuple
from enum import IntEnum

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

SkipMode = namedtuple('SkipMode', ['skip_token', 'skip_weight'])


class ExpertAffinityScaleMode(IntEnum):
    NO_SCALE = 0
    POST_SCALE = 1
    PRE_SCALE = 2


TILE = 128   # tokens, hidden and intermediate rows per tile: the partitions
BANK = 512   # float32 columns of one PSUM bank


def _tiles(n, size=TILE):
    return -(-n // size)


def blockwise_mm(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, block_size,
                 token_position_to_id, block_to_expert, output, gate_up_proj_scale=None, down_proj_scale=None,
                 gate_up_activations_T=None, down_activations=None, skip_dma=SkipMode(False, False),
                 compute_type=nl.bfloat16, is_tensor_update_accumulating=True,
                 expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE, lnc=1):
    T, H = hidden_states.shape
    E, I, down_h = down_proj_weight.shape
    B = block_size
    assert B % TILE == 0 and B > 0, f"block_size {B} is not a multiple of {TILE}"
    assert H % BANK == 0, f"the hidden size {H} is not a multiple of {BANK}"
    assert down_h == H, f"down_proj_weight has hidden size {down_h}, hidden_states {H}"
    assert tuple(gate_up_proj_weight.shape) == (E, H, 2, I), \
        f"gate_up_proj_weight is {tuple(gate_up_proj_weight.shape)}, not {(E, H, 2, I)}"
    assert tuple(output.shape) == (T, H), f"output is {tuple(output.shape)}, not {(T, H)}"
    assert expert_affinities_scaling_mode == ExpertAffinityScaleMode.POST_SCALE, \
        "only post-scaling by the expert affinities is modelled"
    assert lnc == 1, "only lnc=1 is modelled"
    assert gate_up_proj_scale is None and down_proj_scale is None, "quantized weights are not modelled"
    assert gate_up_activations_T is None and down_activations is None, "activation checkpoints are not modelled"
    assert not skip_dma.skip_token and not skip_dma.skip_weight, "skipped DMAs are not modelled"
    N = token_position_to_id.shape[0] // B
    token_tiles = B // TILE
    hidden_tiles = H // TILE
    inter_tiles = _tiles(I)
    block_cols = min(B, BANK)  # tokens per gate/up matmul
    col_groups = _tiles(B, block_cols)

    # The output accumulates over blocks: it starts at zero.
    for t0 in range(0, T, TILE):
        rows = min(TILE, T - t0)
        nl.store(output[t0:t0 + rows, :], value=nl.zeros((rows, H), dtype=output.dtype))

    positions = token_position_to_id.reshape((N * token_tiles, TILE, 1))
    i_h = nl.arange(H)[None, :]
    for blk in nl.sequential_range(N):
        expert = nl.load(block_to_expert[blk:blk + 1, :])  # [1, 1]: the block's expert
        ids = []
        tokens = []
        for n in nl.static_range(token_tiles):
            idx = nl.load(positions[blk * token_tiles + n])  # [TILE, 1] token ids
            ids.append(idx)
            tokens.append(nl.load(hidden_states[idx[:, 0], i_h], dtype=compute_type))

        # x^T: [H tile, B] per hidden tile, for H to be the contraction dimension.
        xt = []
        for h in nl.static_range(hidden_tiles):
            cols = nl.ndarray((TILE, B), dtype=compute_type, buffer=nl.sbuf)
            for n in nl.static_range(token_tiles):
                cols[:, n * TILE:(n + 1) * TILE] = nisa.nc_transpose(tokens[n][:, h * TILE:(h + 1) * TILE])
            xt.append(cols)

        # gate and up: [I tile, B] = W[e, :, g, I tile]^T @ x^T, accumulated over H.
        inter = []
        for i in nl.static_range(inter_tiles):
            i0 = i * TILE
            ni = min(TILE, I - i0)
            proj = []
            for g in nl.static_range(2):
                acc = [nl.zeros((ni, block_cols), dtype=nl.float32, buffer=nl.psum) for c in range(col_groups)]
                for h in nl.static_range(hidden_tiles):
                    w = nl.load(gate_up_proj_weight[expert[0, 0], h * TILE:(h + 1) * TILE, g, i0:i0 + ni],
                                dtype=compute_type)
                    for c in range(col_groups):
                        acc[c] += nisa.nc_matmul(w, xt[h][:, c * block_cols:(c + 1) * block_cols])
                proj.append(acc)
            gated = nl.ndarray((ni, B), dtype=compute_type, buffer=nl.sbuf)
            for c in range(col_groups):
                silu = nisa.activation(op=nl.silu, data=proj[0][c], dtype=compute_type)
                gated[:, c * block_cols:(c + 1) * block_cols] = nl.multiply(silu, proj[1][c], dtype=compute_type)
            inter.append(gated)

        # down, per token tile: [TILE, H] = inter[:, tokens]^T @ W_down[e], a PSUM bank at a time;
        # then scaled by each token's affinity to the expert and added to what output holds.
        for n in nl.static_range(token_tiles):
            slot = nl.add(nl.multiply(ids[n], E, dtype=nl.int32), expert[0, 0], dtype=nl.int32)
            affinity = nl.load(expert_affinities_masked[slot[:, 0], 0:1], dtype=nl.float32)
            old = nl.load(output[ids[n][:, 0], i_h], dtype=compute_type)
            new = nl.ndarray((TILE, H), dtype=output.dtype, buffer=nl.sbuf)
            for b0 in range(0, H, BANK):
                acc = nl.zeros((TILE, BANK), dtype=nl.float32, buffer=nl.psum)
                for i in nl.static_range(inter_tiles):
                    i0 = i * TILE
                    ni = min(TILE, I - i0)
                    w = nl.load(down_proj_weight[expert[0, 0], i0:i0 + ni, b0:b0 + BANK], dtype=compute_type)
                    acc += nisa.nc_matmul(inter[i][:, n * TILE:(n + 1) * TILE], w)
                scaled = nl.multiply(acc, affinity, dtype=compute_type)
                if is_tensor_update_accumulating:
                    scaled = nl.add(scaled, old[:, b0:b0 + BANK], dtype=compute_type)
                new[:, b0:b0 + BANK] = nl.copy(scaled, dtype=output.dtype)
            nl.store(output[ids[n][:, 0], i_h], value=new)
