from pathlib import Path


def primes_below(n):
    sieve = bytearray([1]) * n
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, n, i)))
    return [i for i in range(n) if sieve[i]]


if __name__ == "__main__":
    Path("primes.txt").write_text("\n".join(map(str, primes_below(50000))) + "\n")
