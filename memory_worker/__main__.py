from memory_worker.cli import main

main()
