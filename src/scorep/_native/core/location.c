#include "core/location.h"

#include <stdlib.h>

bool sp_location_grow_stack(sp_location *loc)
{
    uint32_t capacity = loc->capacity ? loc->capacity * 2 : 128;
    sp_frame *stack = realloc(loc->stack, capacity * sizeof *stack);
    if (!stack)
        return false;
    loc->stack = stack;
    loc->capacity = capacity;
    return true;
}
