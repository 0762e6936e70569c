"""The same sweeps elsewhere: on a CUDA GPU (``gpu``, optional extra ``[gpu]``) and on a Ray cluster
(``ray``, optional extra ``[ray]``). Each imports the stochastic engine, never the reverse."""
