from orders import calc_tot


def invoice_text(lines):
    return f"Total: {calc_tot(lines):.2f}"
