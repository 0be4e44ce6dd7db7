"""torch's scaled_dot_product_attention kernels as softmax_attn backends:

    glabench --python torch.sdpa.flash=glabench.sdpa:flash verify --op softmax_attn

SDPA itself returns no lse, which glabench checks and the backward takes; each function
here calls the aten op SDPA dispatches to for one kernel (flash, efficient, cudnn; on the
CPU, flash_cpu), which returns o and lse [B,H,T] and which torch autograd differentiates.
Tokens are transposed to SDPA's heads-first layout as views; o is copied back."""
from __future__ import annotations

import torch

from .kernel import kernel


def heads_first(*ts):
    return [t.transpose(1, 2) for t in ts]


def tokens_first(o, lse, T):
    if lse.dim() == 4:  # cuDNN's lse is [B,H,T,1]
        lse = lse.squeeze(-1)
    return o.transpose(1, 2), lse[..., :T]


@kernel(op="softmax_attn", dtypes=("bfloat16", "float16"), device="cuda")
def flash(q, k, v, *, scale, causal):
    out = torch.ops.aten._scaled_dot_product_flash_attention(*heads_first(q, k, v), 0.0, causal,
                                                             False, scale=scale)
    return tokens_first(out[0], out[1], q.shape[1])


@kernel(op="softmax_attn", dtypes=("float32", "bfloat16", "float16"), device="cuda")
def efficient(q, k, v, *, scale, causal):
    out = torch.ops.aten._scaled_dot_product_efficient_attention(*heads_first(q, k, v), None,
                                                                 True, 0.0, causal, scale=scale)
    return tokens_first(out[0], out[1], q.shape[1])


@kernel(op="softmax_attn", dtypes=("bfloat16", "float16"), device="cuda")
def cudnn(q, k, v, *, scale, causal):
    out = torch.ops.aten._scaled_dot_product_cudnn_attention(*heads_first(q, k, v), None, True,
                                                             0.0, causal, False, scale=scale)
    return tokens_first(out[0], out[1], q.shape[1])


@kernel(op="softmax_attn", dtypes=("float64", "float32"), device="cpu")
def flash_cpu(q, k, v, *, scale, causal):
    out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(*heads_first(q, k, v), 0.0,
                                                                     causal, scale=scale)
    return tokens_first(out[0], out[1], q.shape[1])
