"""Object-oriented workload in the spirit of pyperformance's go: random playouts of the
game of Go on a small board, with square objects, stone groups found by flood fill, captures,
a ko rule, and a Monte Carlo move choice (dictionaries of statistics per move).

    python oo_go.py [GAMES]
"""
import random
import sys
import time

EMPTY, BLACK, WHITE = 0, 1, 2
SIZE = 7


class Square:
    __slots__ = ("board", "index", "colour", "neighbours")

    def __init__(self, board, index):
        self.board = board
        self.index = index
        self.colour = EMPTY
        self.neighbours = []

    def connect(self):
        row, column = divmod(self.index, SIZE)
        for d_row, d_column in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            r, c = row + d_row, column + d_column
            if 0 <= r < SIZE and 0 <= c < SIZE:
                self.neighbours.append(self.board.squares[r * SIZE + c])


class Group:
    """A connected set of stones of one colour and the empty squares next to it."""

    def __init__(self, start):
        self.colour = start.colour
        self.stones = set()
        self.liberties = set()
        pending = [start]
        while pending:
            square = pending.pop()
            if square in self.stones:
                continue
            self.stones.add(square)
            for neighbour in square.neighbours:
                if neighbour.colour == EMPTY:
                    self.liberties.add(neighbour)
                elif neighbour.colour == self.colour and neighbour not in self.stones:
                    pending.append(neighbour)

    def captured(self):
        return not self.liberties


class Board:
    def __init__(self):
        self.squares = [Square(self, i) for i in range(SIZE * SIZE)]
        for square in self.squares:
            square.connect()
        self.to_move = BLACK
        self.ko = None
        self.passes = 0
        self.history = []

    def copy(self):
        other = Board.__new__(Board)
        other.squares = [Square(other, i) for i in range(SIZE * SIZE)]
        for mine, theirs in zip(self.squares, other.squares):
            theirs.colour = mine.colour
        for square in other.squares:
            square.connect()
        other.to_move, other.ko, other.passes = self.to_move, self.ko, self.passes
        other.history = list(self.history)
        return other

    def opponent(self):
        return WHITE if self.to_move == BLACK else BLACK

    def legal(self, square):
        if square.colour != EMPTY or square is self.ko:
            return False
        if any(n.colour == EMPTY for n in square.neighbours):
            return True
        square.colour = self.to_move
        try:
            for neighbour in square.neighbours:
                if neighbour.colour == self.opponent() and Group(neighbour).captured():
                    return True
            return not Group(square).captured()
        finally:
            square.colour = EMPTY

    def eye_of_mover(self, square):
        return all(n.colour == self.to_move for n in square.neighbours)

    def play(self, square):
        self.ko = None
        if square is None:
            self.passes += 1
        else:
            self.passes = 0
            square.colour = self.to_move
            removed = []
            for neighbour in square.neighbours:
                if neighbour.colour == self.opponent():
                    group = Group(neighbour)
                    if group.captured():
                        removed.extend(group.stones)
                        for stone in group.stones:
                            stone.colour = EMPTY
            if len(removed) == 1:
                self.ko = removed[0]
        self.history.append(square.index if square else -1)
        self.to_move = self.opponent()

    def random_move(self, rng):
        candidates = [s for s in self.squares if s.colour == EMPTY and not self.eye_of_mover(s)]
        rng.shuffle(candidates)
        for square in candidates:
            if self.legal(square):
                return square
        return None

    def score(self):
        counts = {BLACK: 0, WHITE: 0}
        for square in self.squares:
            if square.colour != EMPTY:
                counts[square.colour] += 1
            else:
                around = {n.colour for n in square.neighbours} - {EMPTY}
                if len(around) == 1:
                    counts[around.pop()] += 1
        return counts[BLACK] - counts[WHITE] - 2.5


class Player:
    def __init__(self, rng, playouts):
        self.rng = rng
        self.playouts = playouts
        self.wins = {}
        self.visits = {}

    def playout(self, board):
        moves = 0
        while board.passes < 2 and moves < 2 * SIZE * SIZE:
            board.play(board.random_move(self.rng))
            moves += 1
        return board.score()

    def choose(self, board):
        mover = board.to_move
        for _ in range(self.playouts):
            trial = board.copy()
            first = trial.random_move(self.rng)
            trial.play(first)
            key = first.index if first else -1
            result = self.playout(trial)
            won = (result > 0) == (mover == BLACK)
            self.visits[key] = self.visits.get(key, 0) + 1
            self.wins[key] = self.wins.get(key, 0) + (1 if won else 0)
        best = max(self.visits, key=lambda k: (self.wins[k] / self.visits[k], self.visits[k]))
        self.wins.clear()
        self.visits.clear()
        return None if best == -1 else board.squares[best]


def game(rng, moves, playouts):
    board = Board()
    player = Player(rng, playouts)
    for _ in range(moves):
        if board.passes >= 2:
            break
        board.play(player.choose(board))
    return board.score()


def main(games):
    rng = random.Random(3)
    return [game(rng, 6, 4) for _ in range(games)]


games = int(sys.argv[1]) if len(sys.argv) > 1 else 4
start, cpu_start = time.perf_counter(), time.process_time()
main(games)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
