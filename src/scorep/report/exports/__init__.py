"""scorep-report's exports, one module per format: chrome (Chrome trace JSON), perfetto
(Perfetto protobuf), stacks (folded stacks, speedscope), pstats (cProfile's format), dot
(Graphviz call graph)."""
