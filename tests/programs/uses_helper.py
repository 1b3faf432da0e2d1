import helper

print(helper.twice(21))
