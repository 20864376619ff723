"""The lab: what gmeter *produces* for a paper, apart from how the paper is scored.

One package per paper (``lab/<paper>/``): experiment runners, the engines that run agents, agent
processes, Gymnasium environments, the batch protocol, bundle writers, and the use cases of the
paper's own commands that read or write files (``gmeter aiq run``, ``gmeter similarity run``,
``gmeter import maya-experiment``, ``gmeter generality RESPONSES.csv`` …).

The lab imports ``tracks/`` (file formats, settings, scoring) and ``metrics/``; nothing in
``tracks/`` or ``metrics/`` imports the lab, so scoring never depends on how a bundle was made.
"""
