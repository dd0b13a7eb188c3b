"""Outlier ejection by error rate (§5): the policy (``model``) and its Redis store (``store``)."""
