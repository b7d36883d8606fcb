"""O(1)-ish random parameters for the tiny reference models (shared by the recorders beside it)."""
import math

import torch


def randomize_(model, seed, norm="LayerNorm"):
    """Every parameter of `model` drawn again so that every term matters: norm gammas (names holding `norm`,
    ending in weight) around 1, biases N(0, 0.3), the rest N(0, 1.5 / sqrt(fan-in)). seed: an int or a
    torch.Generator (drawn from as it is)."""
    gen = seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if norm in name and name.endswith("weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * (1.5 / math.sqrt(p.shape[-1])))
