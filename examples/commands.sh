memory-worker runs list --status failed              # retired runs show as "retired"
memory-worker runs list --retired                    # only those, with their last error
memory-worker runs show RUN_ID                       # one run with its error log
memory-worker replay --error-code UPSTREAM_ERROR --since 2d --dry-run
memory-worker breakers list                          # breakers reset TARGET to close one
memory-worker report                                 # routing events, pages, backlog
memory-worker forget --chat -100123 --user 42 --dry-run
memory-worker config                                 # every setting and its value
memory-worker farmsim --fault job_failed             # a loopback farm in an outage, to try
