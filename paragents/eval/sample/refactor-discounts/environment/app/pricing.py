from decimal import ROUND_HALF_UP, Decimal


def member_price(price):
    value = Decimal(str(price)) * (1 - Decimal("0.05"))
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def sale_price(price):
    value = Decimal(str(price)) * (1 - Decimal("0.2"))
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def staff_price(price):
    value = Decimal(str(price)) * (1 - Decimal("0.3"))
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
