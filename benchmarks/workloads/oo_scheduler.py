"""Object-oriented workload in the spirit of pyperformance's richards: an operating-system
kernel simulation with a scheduler, task control blocks, packets and four kinds of task
(idle, worker, handler, device) that pass packets around by method calls.

    python oo_scheduler.py [ROUNDS]
"""
import sys
import time

IDLE, WORKER, HANDLER_A, HANDLER_B, DEVICE_A, DEVICE_B = range(6)
KIND_DEVICE, KIND_WORK = 0, 1
BUFFER_SIZE = 4


class Packet:
    def __init__(self, link, ident, kind):
        self.link = link
        self.ident = ident
        self.kind = kind
        self.datum = 0
        self.data = [0] * BUFFER_SIZE

    def append_to(self, queue):
        self.link = None
        if queue is None:
            return self
        tail = queue
        while tail.link is not None:
            tail = tail.link
        tail.link = self
        return queue


class TaskState:
    def __init__(self):
        self.packet_pending = True
        self.waiting = False
        self.holding = False

    def is_held_or_waiting(self):
        return self.holding or (not self.packet_pending and self.waiting)

    def is_waiting_with_packet(self):
        return self.packet_pending and self.waiting and not self.holding


class Task(TaskState):
    def __init__(self, scheduler, ident, priority, queue):
        super().__init__()
        self.scheduler = scheduler
        self.ident = ident
        self.priority = priority
        self.queue = queue
        self.packet_pending = queue is not None
        # A task with packets waits for them; one without runs (idle) or waits (device).
        self.waiting = queue is not None or ident >= DEVICE_A
        self.link = scheduler.tasks
        scheduler.tasks = self
        scheduler.table[ident] = self

    def add_packet(self, packet, previous):
        if self.queue is None:
            self.queue = packet
            self.packet_pending = True
            if self.priority > previous.priority:
                return self
        else:
            self.queue = packet.append_to(self.queue)
        return previous

    def take_packet(self):
        packet = self.queue
        self.queue = packet.link
        self.packet_pending = self.queue is not None
        return packet

    def hold(self):
        self.scheduler.hold_count += 1
        self.holding = True
        return self.link

    def release(self, ident):
        task = self.scheduler.find(ident)
        task.holding = False
        return task if task.priority > self.priority else self

    def wait(self):
        self.waiting = True
        return self

    def send(self, packet):
        task = self.scheduler.find(packet.ident)
        self.scheduler.queue_count += 1
        packet.link = None
        packet.ident = self.ident
        return task.add_packet(packet, self)

    def run(self, packet):
        raise NotImplementedError


class IdleTask(Task):
    def __init__(self, scheduler, count):
        super().__init__(scheduler, IDLE, 0, None)
        self.control = 1
        self.count = count

    def run(self, packet):
        self.count -= 1
        if self.count == 0:
            return self.hold()
        if self.control & 1 == 0:
            self.control //= 2
            return self.release(DEVICE_A)
        self.control = (self.control // 2) ^ 0xD008
        return self.release(DEVICE_B)


class WorkerTask(Task):
    ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def __init__(self, scheduler, queue):
        super().__init__(scheduler, WORKER, 1000, queue)
        self.destination = HANDLER_A
        self.count = 0

    def run(self, packet):
        if packet is None:
            return self.wait()
        self.destination = HANDLER_B if self.destination == HANDLER_A else HANDLER_A
        packet.ident = self.destination
        packet.datum = 0
        for i in range(BUFFER_SIZE):
            self.count = self.count % 26 + 1
            packet.data[i] = self.ALPHABET[self.count - 1]
        return self.send(packet)


class HandlerTask(Task):
    def __init__(self, scheduler, ident, queue):
        super().__init__(scheduler, ident, 2000 + ident, queue)
        self.work_in = None
        self.device_in = None

    def run(self, packet):
        if packet is not None:
            if packet.kind == KIND_WORK:
                self.work_in = packet.append_to(self.work_in)
            else:
                self.device_in = packet.append_to(self.device_in)
        if self.work_in is not None:
            work = self.work_in
            count = work.datum
            if count < BUFFER_SIZE:
                if self.device_in is not None:
                    device = self.device_in
                    self.device_in = device.link
                    device.datum = work.data[count]
                    work.datum = count + 1
                    return self.send(device)
            else:
                self.work_in = work.link
                return self.send(work)
        return self.wait()


class DeviceTask(Task):
    def __init__(self, scheduler, ident):
        super().__init__(scheduler, ident, 4000 + ident, None)
        self.pending = None

    def run(self, packet):
        if packet is None:
            if self.pending is None:
                return self.wait()
            pending, self.pending = self.pending, None
            return self.send(pending)
        self.pending = packet
        return self.hold()


class Scheduler:
    def __init__(self):
        self.tasks = None
        self.table = {}
        self.hold_count = 0
        self.queue_count = 0

    def find(self, ident):
        return self.table[ident]

    def schedule(self):
        task = self.tasks
        while task is not None:
            if task.is_held_or_waiting():
                task = task.link
            elif task.is_waiting_with_packet():
                task.waiting = False
                task = task.run(task.take_packet())
            else:
                task = task.run(None)


def simulate(count):
    scheduler = Scheduler()
    IdleTask(scheduler, count)
    queue = Packet(None, 0, KIND_WORK)
    queue = Packet(queue, 0, KIND_WORK)
    WorkerTask(scheduler, queue)
    for handler, device in ((HANDLER_A, DEVICE_A), (HANDLER_B, DEVICE_B)):
        queue = Packet(None, device, KIND_DEVICE)
        queue = Packet(queue, device, KIND_DEVICE)
        queue = Packet(queue, device, KIND_DEVICE)
        HandlerTask(scheduler, handler, queue)
    DeviceTask(scheduler, DEVICE_A)
    DeviceTask(scheduler, DEVICE_B)
    scheduler.schedule()
    return scheduler.queue_count, scheduler.hold_count


def main(rounds):
    result = None
    for _ in range(rounds):
        result = simulate(1000)
    if rounds and result != (2322, 928):
        raise SystemExit("wrong result %r" % (result,))


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
start, cpu_start = time.perf_counter(), time.process_time()
main(rounds)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
