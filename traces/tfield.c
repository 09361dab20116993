/* tfield.c — strict field parsers for trace readers. */
#include "traces/tfield.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int tfield_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s)
        return -EINVAL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -EINVAL;
    *out = (int64_t)v;
    return 0;
}

int tfield_f64(const char *s, double *out)
{
    char *end;
    if (!s || !*s)
        return -EINVAL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE && fabs(v) > 1.0)
        return -EINVAL;
    if (end == s || *end || !isfinite(v))
        return -EINVAL;
    *out = v;
    return 0;
}

int64_t tfield_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t mp = (int64_t)(m > 2 ? m - 3 : m + 9);
    int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tfield_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* Exactly n digits at *p; advances *p. */
static bool digits(const char **p, int n, int64_t *v)
{
    int64_t x = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        x = x * 10 + (c - '0');
    }
    *p += n;
    *v = x;
    return true;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int parse_zone(const char *p, int32_t *tz_s)
{
    if (strcmp(p, "Z") == 0 || strcmp(p, "UTC") == 0 || strcmp(p, "GMT") == 0) {
        *tz_s = 0;
        return 0;
    }
    if (*p != '+' && *p != '-')
        return -EINVAL;
    int sign = *p == '-' ? -1 : 1;
    p++;
    int64_t hh, mm = 0;
    size_t n = strlen(p);
    if (n == 1) {
        if (!digits(&p, 1, &hh))
            return -EINVAL;
    } else {
        if (!digits(&p, 2, &hh))
            return -EINVAL;
        if (*p == ':')
            p++;
        if (*p && !digits(&p, 2, &mm))
            return -EINVAL;
    }
    if (*p || hh > 14 || mm > 59)
        return -EINVAL;
    *tz_s = (int32_t)(sign * (hh * 3600 + mm * 60));
    return 0;
}

int tfield_tz(const char *s, int32_t *tz_s)
{
    if (!s || !*s)
        return -EINVAL;
    return parse_zone(s, tz_s);
}

int tfield_wallclock(const char *s, int32_t tz_s, int64_t *us)
{
    static const unsigned char mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *p = s;
    int64_t y, mo, d, hh = 0, mi = 0, ss = 0, frac = 0;
    if (!s || !digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d))
        return -EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y)))
        return -EINVAL;
    if (*p == ' ' || *p == 'T') {
        p++;
        if (!digits(&p, 2, &hh) || *p++ != ':' || !digits(&p, 2, &mi))
            return -EINVAL;
        if (*p == ':') {
            p++;
            if (!digits(&p, 2, &ss))
                return -EINVAL;
            if (*p == '.') {
                p++;
                int n = 0;
                while (*p >= '0' && *p <= '9') {
                    if (n < 6)
                        frac = frac * 10 + (*p - '0');
                    n++;
                    p++;
                }
                if (n == 0)
                    return -EINVAL;
                for (int i = n; i < 6; i++)
                    frac *= 10;
            }
        }
        if (hh > 23 || mi > 59 || ss > 60)
            return -EINVAL;
    }
    int32_t zone = tz_s;
    if (*p && parse_zone(p, &zone) < 0)
        return -EINVAL;
    int64_t days = tfield_days_from_civil(y, (unsigned)mo, (unsigned)d);
    int64_t secs = days * 86400 + hh * 3600 + mi * 60 + ss - zone;
    *us = secs * 1000000 + frac;
    return 0;
}

int tfield_time(const char *s, enum tfield_unit unit, int32_t tz_s, int64_t *us)
{
    if (unit == TFIELD_WALL)
        return tfield_wallclock(s, tz_s, us);
    int64_t iv, k = unit == TFIELD_SEC ? SIM_SEC : unit == TFIELD_MS ? SIM_MS : SIM_US;
    sim_time t;
    if (tfield_i64(s, &iv) == 0) {
        if (sim_time_mul_checked(iv, k, &t) < 0 || !sim_time_in_range(t))
            return -EINVAL;
        *us = t;
        return 0;
    }
    double v;
    if (tfield_f64(s, &v) < 0)
        return -EINVAL;
    double u = v * (double)k;
    if (!(fabs(u) <= (double)SIM_TIME_LIMIT))
        return -EINVAL;
    *us = (int64_t)llround(u);
    return 0;
}

int tfield_unit_parse(const char *s, enum tfield_unit *unit)
{
    static const struct {
        char name[12];
        enum tfield_unit u;
    } names[] = {{"s", TFIELD_SEC},     {"sec", TFIELD_SEC},       {"seconds", TFIELD_SEC},
                 {"ms", TFIELD_MS},     {"us", TFIELD_US},         {"\xc2\xb5s", TFIELD_US},
                 {"wall", TFIELD_WALL}, {"datetime", TFIELD_WALL}, {"iso", TFIELD_WALL}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i].name) == 0) {
            *unit = names[i].u;
            return 0;
        }
    return -EINVAL;
}
