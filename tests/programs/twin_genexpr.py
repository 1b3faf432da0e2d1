"""Two generator expressions in one module, on different lines: two regions of one name
(__main__:<genexpr>) that the reports must tell apart by their line."""
evens = sum(x for x in range(1000) if x % 2 == 0)
odds = sum(x for x in range(3000) if x % 2 == 1)
print(evens, odds)
