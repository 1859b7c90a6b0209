#!/bin/bash
# Hidden tests of a paragents sample task: copied to /tests only after the agent stopped, run from the
# task's working directory /app; the reward goes to /logs/verifier/reward.txt (Harbor's convention).
mkdir -p /logs/verifier
cd /app || exit 1
if python3 -m unittest discover -s /tests -p 'test_*.py' -t /tests -v; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
