#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
cat > pricing.py <<'EOF'
from decimal import ROUND_HALF_UP, Decimal


def apply_rate(price, rate):
    value = Decimal(str(price)) * (1 - Decimal(str(rate)))
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def member_price(price):
    return apply_rate(price, "0.05")


def sale_price(price):
    return apply_rate(price, "0.2")


def staff_price(price):
    return apply_rate(price, "0.3")
EOF
