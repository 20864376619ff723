"""The AIQ lab (Legg & Veness 2013): what ``gmeter aiq`` runs and writes.

The engine, agents (Python classes, programs, Gymnasium policies), the batch protocol, the
Gymnasium environments, program sampling, replay and the bundle writer behind ``gmeter aiq
run``, ``sample``, ``compare``, ``replay`` and ``verify``.
"""
