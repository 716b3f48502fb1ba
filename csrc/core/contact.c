/* contact.c - Cundall-Strack spring-dashpot contacts (see contact.h). */
#include "contact.h"

#include <math.h>

void ts_contact_coefficients(const ts_contact_law *law, double m_eff, double *k, double *c)
{
    double ln_e = log(law->restitution), t_c = law->contact_time;
    *k = m_eff / (t_c * t_c) * (M_PI * M_PI + ln_e * ln_e);   /* eq. A-9 */
    *c = -2.0 * m_eff / t_c * ln_e;                          /* eq. A-10, with the oscillator's factor 2 */
}

ts_contact_result ts_contact_force_dashpot(const ts_contact_law *law, double k, double c, double d_n, ts_vec3 u_n,
                                           ts_vec3 v_c)
{
    double v_n = ts_v3_dot(v_c, u_n);
    ts_vec3 v_t = ts_v3_sub(v_c, ts_v3_scale(u_n, v_n));
    double F_n = k * d_n - c * v_n;                          /* eq. 5 */
    ts_vec3 F_t = ts_v3_scale(v_t, c);                       /* eq. 6 (sign: on body 1, along body 2's motion) */
    double F_t2 = ts_v3_dot(F_t, F_t), limit = law->friction * fabs(F_n);
    if (F_t2 > limit * limit)
        F_t = ts_v3_scale(F_t, limit / sqrt(F_t2));
    ts_contact_result r;
    r.tangential = F_t;
    r.normal = F_n;
    r.force = ts_v3_add(ts_v3_scale(u_n, -F_n), F_t);        /* eq. 4 */
    return r;
}
