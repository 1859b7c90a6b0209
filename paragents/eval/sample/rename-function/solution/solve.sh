#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
sed -i 's/calc_tot/calculate_total/g' orders.py invoice.py
