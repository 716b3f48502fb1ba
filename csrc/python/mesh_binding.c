/* mesh_binding.c - mesh checks and mass properties from Python, so the
 * add-on can reject a bad mesh with the object's name before a bake starts:
 *   check_closed_mesh(vertices, triangles, name)      raises ValueError
 *   mesh_mass_properties(vertices, triangles, name) -> (volume, centroid, inertia per unit density) */
#include "binding.h"

#include "core/mesh.h"
#include "core/rigid.h"

static int parse_mesh(PyObject *args, PyArrayObject **v, PyArrayObject **t, const char **name)
{
    PyObject *v_obj, *t_obj;
    if (!PyArg_ParseTuple(args, "OOs", &v_obj, &t_obj, name))
        return 0;
    const npy_intp d3[2] = {-1, 3};
    *v = tsubu_array(v_obj, NPY_FLOAT32, 2, d3, "vertices");
    *t = *v ? tsubu_array(t_obj, NPY_INT32, 2, d3, "triangles") : NULL;
    if (!*t) {
        Py_XDECREF(*v);
        return 0;
    }
    return 1;
}

static PyObject *check_closed_mesh(PyObject *self, PyObject *args)
{
    (void)self;
    PyArrayObject *v, *t;
    const char *name;
    if (!parse_mesh(args, &v, &t, &name))
        return NULL;
    ts_error err;
    ts_status st = ts_mesh_check_closed(PyArray_DATA(v), (size_t)PyArray_DIM(v, 0), PyArray_DATA(t),
                                        (size_t)PyArray_DIM(t, 0), name, &err);
    Py_DECREF(v);
    Py_DECREF(t);
    return st == TS_OK ? Py_NewRef(Py_None) : tsubu_raise(&err);
}

static PyObject *mesh_mass_properties(PyObject *self, PyObject *args)
{
    (void)self;
    PyArrayObject *v, *t;
    const char *name;
    if (!parse_mesh(args, &v, &t, &name))
        return NULL;
    ts_mass_properties mp;
    ts_error err;
    ts_status st = ts_mesh_mass_properties(PyArray_DATA(v), (size_t)PyArray_DIM(v, 0), PyArray_DATA(t),
                                           (size_t)PyArray_DIM(t, 0), name, &mp, &err);
    Py_DECREF(v);
    Py_DECREF(t);
    if (st != TS_OK)
        return tsubu_raise(&err);
    const ts_mat3 *inertia = &mp.inertia;  /* not I: NumPy 2's headers include complex.h */
    return Py_BuildValue("d(ddd)((ddd)(ddd)(ddd))", mp.volume, mp.centroid.x, mp.centroid.y, mp.centroid.z,
                         inertia->m[0][0], inertia->m[0][1], inertia->m[0][2], inertia->m[1][0], inertia->m[1][1], inertia->m[1][2], inertia->m[2][0],
                         inertia->m[2][1], inertia->m[2][2]);
}

PyMethodDef tsubu_mesh_methods[] = {
    {"check_closed_mesh", check_closed_mesh, METH_VARARGS,
     "check_closed_mesh(vertices, triangles, name): ValueError naming the object unless the mesh is closed"},
    {"mesh_mass_properties", mesh_mass_properties, METH_VARARGS,
     "mesh_mass_properties(vertices, triangles, name) -> (volume, centroid, inertia per unit density)"},
    {NULL, NULL, 0, NULL},
};
