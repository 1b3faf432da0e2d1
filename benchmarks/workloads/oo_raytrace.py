"""Object-oriented workload in the spirit of pyperformance's raytrace: a small ray tracer
with vector and colour classes, operator overloading, a scene of spheres and planes,
Lambert and mirror shading and recursive reflections.

    python oo_raytrace.py [SIZE]     (renders SIZE x SIZE pixels)
"""
import math
import sys
import time

EPSILON = 1e-5


class Vector:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z

    def __add__(self, other):
        return Vector(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other):
        return Vector(self.x - other.x, self.y - other.y, self.z - other.z)

    def scale(self, factor):
        return Vector(self.x * factor, self.y * factor, self.z * factor)

    def dot(self, other):
        return self.x * other.x + self.y * other.y + self.z * other.z

    def cross(self, other):
        return Vector(self.y * other.z - self.z * other.y, self.z * other.x - self.x * other.z,
                      self.x * other.y - self.y * other.x)

    def length(self):
        return math.sqrt(self.dot(self))

    def normalized(self):
        return self.scale(1.0 / self.length())

    def reflect_through(self, normal):
        return self - normal.scale(2 * self.dot(normal))


class Colour:
    __slots__ = ("r", "g", "b")

    def __init__(self, r, g, b):
        self.r, self.g, self.b = r, g, b

    def __add__(self, other):
        return Colour(self.r + other.r, self.g + other.g, self.b + other.b)

    def __mul__(self, other):
        if isinstance(other, Colour):
            return Colour(self.r * other.r, self.g * other.g, self.b * other.b)
        return Colour(self.r * other, self.g * other, self.b * other)

    def clamped(self):
        return Colour(min(self.r, 1.0), min(self.g, 1.0), min(self.b, 1.0))


BLACK = Colour(0.0, 0.0, 0.0)


class Ray:
    __slots__ = ("origin", "direction")

    def __init__(self, origin, direction):
        self.origin = origin
        self.direction = direction.normalized()

    def point_at(self, distance):
        return self.origin + self.direction.scale(distance)


class Shape:
    def __init__(self, surface):
        self.surface = surface

    def intersect(self, ray):
        raise NotImplementedError

    def normal_at(self, point):
        raise NotImplementedError


class Sphere(Shape):
    def __init__(self, centre, radius, surface):
        super().__init__(surface)
        self.centre = centre
        self.radius = radius

    def intersect(self, ray):
        to_centre = self.centre - ray.origin
        along = to_centre.dot(ray.direction)
        off_axis = to_centre.dot(to_centre) - along * along
        inside = self.radius * self.radius - off_axis
        if inside < 0:
            return None
        return along - math.sqrt(inside)

    def normal_at(self, point):
        return (point - self.centre).normalized()


class Plane(Shape):
    def __init__(self, point, normal, surface):
        super().__init__(surface)
        self.point = point
        self.normal = normal.normalized()

    def intersect(self, ray):
        facing = ray.direction.dot(self.normal)
        if abs(facing) < EPSILON:
            return None
        return (self.point - ray.origin).dot(self.normal) / facing

    def normal_at(self, point):
        return self.normal


class Surface:
    def __init__(self, colour, diffuse, reflective):
        self.colour = colour
        self.diffuse = diffuse
        self.reflective = reflective

    def colour_at(self, scene, ray, point, normal, depth):
        colour = BLACK
        if self.reflective > 0 and depth < scene.max_depth:
            bounce = Ray(point, ray.direction.reflect_through(normal))
            colour = colour + scene.trace(bounce, depth + 1) * self.reflective
        if self.diffuse > 0:
            lambert = 0.0
            for light in scene.lights:
                to_light = (light - point).normalized()
                if scene.visible(point, to_light):
                    lambert += max(0.0, to_light.dot(normal))
            colour = colour + self.colour * (self.diffuse * min(lambert, 1.0))
        return colour


class CheckerSurface(Surface):
    def __init__(self, other, diffuse, reflective):
        super().__init__(Colour(1.0, 1.0, 1.0), diffuse, reflective)
        self.other = other

    def colour_at(self, scene, ray, point, normal, depth):
        base = self.colour if (int(math.floor(point.x)) + int(math.floor(point.z))) % 2 \
            else self.other
        saved, self.colour = self.colour, base
        try:
            return super().colour_at(scene, ray, point, normal, depth)
        finally:
            self.colour = saved


class Scene:
    def __init__(self, max_depth=3):
        self.shapes = []
        self.lights = []
        self.max_depth = max_depth

    def nearest(self, ray):
        best, best_shape = None, None
        for shape in self.shapes:
            distance = shape.intersect(ray)
            if distance is not None and distance > EPSILON and (best is None or distance < best):
                best, best_shape = distance, shape
        return best, best_shape

    def visible(self, point, direction):
        distance, _shape = self.nearest(Ray(point, direction))
        return distance is None

    def trace(self, ray, depth=0):
        distance, shape = self.nearest(ray)
        if shape is None:
            return BLACK
        point = ray.point_at(distance)
        return shape.surface.colour_at(self, ray, point, shape.normal_at(point), depth)


class Camera:
    def __init__(self, eye, look_at, size):
        self.eye = eye
        self.forward = (look_at - eye).normalized()
        self.right = self.forward.cross(Vector(0.0, 1.0, 0.0)).normalized()
        self.up = self.right.cross(self.forward)
        self.size = size

    def ray(self, column, row):
        x = (column + 0.5) / self.size - 0.5
        y = 0.5 - (row + 0.5) / self.size
        return Ray(self.eye, self.forward + self.right.scale(x) + self.up.scale(y))


def build_scene():
    scene = Scene()
    shiny = Surface(Colour(0.9, 0.3, 0.2), 0.7, 0.3)
    matte = Surface(Colour(0.2, 0.5, 0.9), 0.9, 0.0)
    scene.shapes.append(Sphere(Vector(0.0, 1.0, 5.0), 1.0, shiny))
    scene.shapes.append(Sphere(Vector(-2.0, 0.7, 6.5), 0.7, matte))
    scene.shapes.append(Sphere(Vector(2.0, 0.5, 4.0), 0.5, Surface(Colour(1.0, 1.0, 1.0), 0.2, 0.8)))
    scene.shapes.append(Plane(Vector(0.0, 0.0, 0.0), Vector(0.0, 1.0, 0.0),
                              CheckerSurface(Colour(0.1, 0.1, 0.1), 0.8, 0.2)))
    scene.lights.append(Vector(-5.0, 8.0, -2.0))
    scene.lights.append(Vector(6.0, 5.0, 1.0))
    return scene


def render(size):
    scene = build_scene()
    camera = Camera(Vector(0.0, 1.8, -2.0), Vector(0.0, 0.8, 5.0), size)
    total = BLACK
    for row in range(size):
        for column in range(size):
            total = total + scene.trace(camera.ray(column, row)).clamped()
    return total


size = int(sys.argv[1]) if len(sys.argv) > 1 else 40
start, cpu_start = time.perf_counter(), time.process_time()
result = render(size)
if size and not result.r > 0:
    raise SystemExit("nothing rendered")
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
