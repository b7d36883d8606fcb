#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu/check.sh's timings, on the same GPU in the same run.

    torch_peer.py CONFIG_DIR BATCHES SEQ [RUNS]

transformers' BertModel built from CONFIG_DIR/config.json (random weights, as
encc's --weights=random artifacts), fp16, eval, SDPA attention. One timed call
is what encrt_session_run does for a pooled model: ids and mask from the host
to the device, the forward pass, mean pooling over the valid tokens, the
pooled rows back to the host; every sequence full length. Prints one line per
batch in gpu_check's TIME format (median over RUNS after 10 warm-ups, wall
clock, synchronous), so check.sh's table lists both.
"""
import statistics
import sys
import time


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    config_dir, batches, seq = sys.argv[1], [int(b) for b in sys.argv[2].split(",")], int(sys.argv[3])
    runs = int(sys.argv[4]) if len(sys.argv) == 5 else 100
    try:
        import torch
        from transformers import AutoModel, BertConfig
    except ImportError as e:
        print(f"torch peer: skipped ({e})")
        return 0
    if not torch.cuda.is_available():
        print("torch peer: skipped (torch sees no CUDA device)")
        return 0
    torch.manual_seed(0)
    config = BertConfig.from_json_file(f"{config_dir}/config.json")
    model = AutoModel.from_config(config, attn_implementation="sdpa")
    model = model.to(device="cuda", dtype=torch.float16).eval()
    print(f"torch peer: torch {torch.__version__}, {torch.cuda.get_device_name()}, BertModel fp16 sdpa")
    g = torch.Generator().manual_seed(1)
    for batch in batches:
        ids = torch.randint(1000, config.vocab_size, (batch, seq), generator=g, dtype=torch.int64)
        mask = torch.ones(batch, seq, dtype=torch.int64)

        def call():
            with torch.inference_mode():
                i, m = ids.to("cuda", non_blocking=False), mask.to("cuda", non_blocking=False)
                hidden = model(input_ids=i, attention_mask=m).last_hidden_state
                mf = m.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mf).sum(1) / mf.sum(1)
                return pooled.float().cpu()

        for _ in range(10):
            call()
        ms = []
        for _ in range(runs):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            call()
            ms.append((time.perf_counter() - t0) * 1e3)
        ms.sort()
        med = statistics.median(ms)
        print(f"TIME torch-bertmodel-fp16-sdpa batch {batch} seq {seq} median_ms {med:.3f} "
              f"p10_ms {ms[len(ms) // 10]:.3f} p90_ms {ms[len(ms) * 9 // 10]:.3f} "
              f"seq_per_s {1000.0 * batch / med:.0f} device cuda", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
