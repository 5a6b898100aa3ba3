"""The target attention network of achilles Alg. 1: records and target embedded, attended, pooled, scored.

The network embeds records and target with one MLP, takes a query from the target and
keys and values from the records, and turns the attention-weighted sum of the values into
a membership logit with a second MLP.  Alg. 1 scores records with ``<q_t, v_j>`` and so
never uses ``W_k``; the text speaks of queries and keys, so we score with keys,
``<q_t, k_j>`` (standard attention).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["TargetAttentionNet"]


class TargetAttentionNet(nn.Module):
    """The target attention network of achilles Alg. 1 (returns a logit, not a probability).

    Parameters
    ----------
    n_features : int
        F', the width of a preprocessed record.
    embedding_hidden, embedding_size : int
        Hidden width and output width F_emb of the embedding MLP (20 and 20).
    attention_size : int
        F_att, width of the query, keys and values (15).
    prediction_hidden : int
        Hidden width of the prediction MLP (10).
    dropout : float
        Dropout after each MLP's hidden ReLU layer (0.15).
    """

    def __init__(
        self,
        n_features: int,
        embedding_hidden: int = 20,
        embedding_size: int = 20,
        attention_size: int = 15,
        prediction_hidden: int = 10,
        dropout: float = 0.15,
    ):
        super().__init__()
        self.embed = nn.Sequential(
            nn.Linear(n_features, embedding_hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(embedding_hidden, embedding_size),
        )
        self.query = nn.Linear(embedding_size, attention_size, bias=False)
        self.key = nn.Linear(embedding_size, attention_size, bias=False)
        self.value = nn.Linear(embedding_size, attention_size, bias=False)
        self.predict = nn.Sequential(
            nn.Linear(attention_size, prediction_hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(prediction_hidden, 1),
        )

    def _attend(self, records, mask, target):
        """Attention weights (batch, X) and values (batch, X, F_att)."""
        e = self.embed(records)  # (batch, X, F_emb)
        q = self.query(self.embed(target))  # (F_att,): one target for all datasets
        k, v = self.key(e), self.value(e)
        scores = (k * q.unsqueeze(-2)).sum(-1)  # <q_t, k_j>
        # Padding gets -inf, hence weight 0; every dataset has at least one real record.
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1), v

    def attention(self, records: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Attention weights (batch, X) of the target over each dataset's records; 0 on padding."""
        return self._attend(records, mask, target)[0]

    def forward(self, records: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Membership logits (batch,) of ``records`` (batch, X, F'), ``mask`` (batch, X), ``target`` (F',)."""
        weights, values = self._attend(records, mask, target)
        pooled = (weights.unsqueeze(-1) * values).sum(-2)  # dataset-level embedding D_att
        return self.predict(pooled).squeeze(-1)
