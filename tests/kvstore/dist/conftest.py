"""The scripts are what the MPI jobs run, not test modules: pytest must not import them."""

collect_ignore_glob = ["scripts/*"]
